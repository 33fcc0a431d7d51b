'use strict'

// Reads and writes answered at once on the JavaScript thread when the engine can do them from
// memory without waiting, and handed to libuv's threads otherwise (src/database.rs): the
// native methods return the answer itself in the first case and a promise in the second, and
// the answers are the same either way.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const native = require('../lib/native')
const { StrataLevel } = require('..')
const { tempDir } = require('./helpers')

const isPromise = (x) => x instanceof Promise

test('reads and writes of a small database are answered at once', async (t) => {
  const db = await native.open(path.join(tempDir(), 'db'), {})
  t.after(() => db.close())
  assert.equal(db.put('a', '1', false), undefined)
  assert.equal(db.get('a', true, true, null), '1')
  assert.equal(db.get('missing', true, true, null), undefined)
  assert.deepEqual(db.getMany(['a', 'missing'], true, true, null), ['1', undefined])
  assert.equal(db.has('a', true, null), true)
  assert.deepEqual(db.hasMany(['missing', 'a'], true, null), [false, true])
  assert.equal(db.del('a', false), undefined)
  assert.equal(db.get('a', true, true, null), undefined)
  assert.equal(db.batch([{ type: 'put', key: 'b', value: '2' }], false), undefined)
  const snapshot = db.snapshot()
  assert.equal(db.put('b', '3', false), undefined)
  assert.equal(db.get('b', true, true, snapshot), '2', 'an explicit snapshot is read at once too')
  assert.equal(db.get('b', true, true, null), '3')
})

test('a sync write is a task, and until it is done nothing is answered at once', async (t) => {
  const db = await native.open(path.join(tempDir(), 'db'), {})
  t.after(() => db.close())
  const synced = db.put('k', 'synced', true)
  assert.ok(isPromise(synced), 'a sync write waits for the disk')
  // Made after it: a read and a write also become tasks (answered at once, they would run
  // before it). The read sees the state of its call (abstract-level's implicit snapshot):
  // the sync write, unless its task was quicker. The two writes, both tasks now, are in no
  // defined order (abstract-level's "Order Of Operations").
  const read = db.get('k', true, true, null)
  const written = db.put('k', 'later', false)
  assert.ok(isPromise(read) && isPromise(written))
  await synced
  await written
  assert.ok([undefined, 'synced'].includes(await read))
  const last = db.get('k', true, true, null)
  assert.ok(!isPromise(last), 'with no write pending, reads are answered at once again')
  assert.ok(['synced', 'later'].includes(last))
})

test('reads that need the disk, and writes that need room, are tasks with the same answers', async (t) => {
  const location = path.join(tempDir(), 'db')
  const options = { writeBufferSize: 64 * 1024, maxFileSize: 32 * 1024, compression: false }
  const key = (i) => String(i).padStart(6, '0')
  let db = await native.open(location, options)
  // A full memtable is switched at once, unless the last one is still being flushed: then
  // the write waits for it, as a task (as does one that finds the state held a moment by a
  // background thread). Keys are rewritten until a write has been a task.
  let tasks = 0
  for (let i = 0; i < 5000 || (tasks === 0 && i < 200000); i++) {
    const written = db.put(key(i % 5000), 'v'.repeat(100), false)
    if (isPromise(written)) {
      tasks++
      await written
    }
  }
  assert.ok(tasks > 0, 'no write was a task')
  await db.compactRange(key(0), key(9999))
  await db.close()
  // Reopened, its ~16 tables are not open (unless background work opened one): lookups in
  // them are tasks; once a table is open and the block cached, the same lookups are
  // answered at once.
  db = await native.open(location, options)
  t.after(() => db.close())
  const keys = Array.from({ length: 50 }, (_, i) => key(i * 100 + 7))
  const answers = keys.map((k) => db.get(k, true, true, null))
  assert.ok(answers.some(isPromise), 'no lookup needed a table opened')
  for (const answer of answers) assert.equal(await answer, 'v'.repeat(100))
  const again = keys.map((k) => db.get(k, true, true, null))
  assert.ok(again.some((answer) => !isPromise(answer)), 'no lookup was answered from memory')
  for (const answer of again) assert.equal(await answer, 'v'.repeat(100))
  const many = db.getMany([key(1234), key(4999), 'none'], true, true, null)
  assert.deepEqual(await many, ['v'.repeat(100), 'v'.repeat(100), undefined])
  assert.equal(await db.has(key(4999), true, null), true)
})

test('the abstract-level database gives the same answers on both paths', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'), { writeBufferSize: 64 * 1024 })
  await db.open()
  t.after(() => db.close())
  const expected = new Map()
  for (let i = 0; i < 3000; i++) {
    const key = String(i * 7919 % 3000).padStart(5, '0')
    const value = `value ${i}`
    expected.set(key, value)
    // Some awaited, some not: un-awaited writes pile up as tasks, and nothing is answered
    // at once until they are done (each key is written once: tasks have no order).
    if (i % 3 === 0) await db.put(key, value, { sync: i % 300 === 0 })
    else db.put(key, value)
  }
  await db.put('last', 'write')
  for (const [key, value] of expected) assert.equal(await db.get(key), value)
  assert.deepEqual(await db.getMany(['00001', 'nope']), [expected.get('00001'), undefined])
  assert.equal(await db.get('last'), 'write')
})
