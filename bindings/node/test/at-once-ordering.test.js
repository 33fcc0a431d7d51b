'use strict'

// Attacks on the at-once path of src/database.rs that hold: a read answered at once sees
// every write answered at once before it (at the latest state and at an explicit snapshot
// taken between them), a chained batch answered at once is ordered like any write, and
// writes answered at once are in the database after a close and a reopen.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const native = require('../lib/native')
const { tempDir } = require('./helpers')

const isPromise = (x) => x instanceof Promise
const key = (i) => String(i).padStart(6, '0')

test('reads at once see every write answered at once before them, at implicit and explicit snapshots', async (t) => {
  const db = await native.open(path.join(tempDir(), 'db'), { writeBufferSize: 64 * 1024 })
  t.after(() => db.close())
  let atOnce = 0
  for (let i = 0; i < 3000; i++) {
    const written = db.put(key(i % 100), `v${i}`, false)
    if (isPromise(written)) {
      await written
      continue
    }
    atOnce++
    const snapshot = db.snapshot()
    const found = db.get(key(i % 100), true, true, null)
    assert.equal(await found, `v${i}`)
    db.put(key(i % 100), 'overwritten', false)
    assert.equal(await db.get(key(i % 100), true, true, snapshot), `v${i}`, 'an explicit snapshot')
    snapshot.close()
    await db.put(key(i % 100), `v${i}`, false)
  }
  assert.ok(atOnce > 0)
})

test('writes answered at once, chained batches among them, are there after close and reopen', async (t) => {
  const location = path.join(tempDir(), 'db')
  let db = await native.open(location, { writeBufferSize: 64 * 1024 })
  const expected = new Map()
  let atOnce = 0
  for (let i = 0; i < 4000; i++) {
    const k = key(i % 500)
    let written
    if (i % 3 === 0) {
      const chained = new native.Batch()
      chained.put(k, `c${i}`)
      written = db.writeBatch(chained, false)
    } else {
      written = db.put(k, `p${i}`, false)
    }
    expected.set(k, i % 3 === 0 ? `c${i}` : `p${i}`)
    if (isPromise(written)) await written
    else atOnce++
  }
  assert.ok(atOnce > 0, 'no write was answered at once')
  await db.close()
  db = await native.open(location, {})
  t.after(() => db.close())
  for (const [k, v] of expected) assert.equal(await db.get(k, true, true, null), v, k)
})
