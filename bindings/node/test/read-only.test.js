'use strict'

// `readOnly: true` (a handle beside the writer, no LOCK, writes refused, refresh) and
// `checkpoint(dir)` (a copy of one moment that Strata and real LevelDB open).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { ClassicLevel } = require('classic-level')
const { StrataLevel } = require('..')
const { tempDir } = require('./helpers')

// Every entry of `db` as [key, value] strings.
function entries (db) {
  return db.iterator().all()
}

test('a read-only handle reads beside the writer that holds the LOCK, and refresh() catches up', async (t) => {
  const location = path.join(tempDir(), 'db')
  const writer = new StrataLevel(location)
  await writer.put('a', '1')
  await writer.put('b', '2')

  const reader = new StrataLevel(location, { readOnly: true })
  await reader.open()
  assert.deepEqual(await entries(reader), [['a', '1'], ['b', '2']])
  assert.equal(await reader.get('b'), '2')
  assert.equal(reader.getSync('a'), '1')
  assert.equal(await reader.has('a'), true)
  assert.deepEqual(await reader.getMany(['a', 'c']), ['1', undefined])

  // The reader stays at the state it opened on until refresh().
  await writer.put('c', '3')
  await writer.del('a')
  assert.equal(await reader.get('c'), undefined)
  const snapshot = reader.snapshot()
  await reader.refresh()
  assert.deepEqual(await entries(reader), [['b', '2'], ['c', '3']])
  // A snapshot taken before the refresh keeps its state.
  assert.equal(await reader.get('a', { snapshot }), '1')
  await snapshot.close()

  await reader.close()
  await writer.close()
})

test('a read-only handle refuses every write with LEVEL_NOT_SUPPORTED and leaves the files as they were', async (t) => {
  const location = path.join(tempDir(), 'db')
  const writer = new StrataLevel(location)
  await writer.batch([{ type: 'put', key: 'a', value: '1' }, { type: 'put', key: 'b', value: '2' }])
  await writer.close()
  const before = fs.readdirSync(location).sort()

  const reader = new StrataLevel(location, { readOnly: true })
  await reader.open()
  const refused = (err) => {
    assert.equal(err.code, 'LEVEL_NOT_SUPPORTED')
    assert.match(err.message, /read-only/)
    return true
  }
  await assert.rejects(reader.put('c', '3'), refused)
  await assert.rejects(reader.del('a'), refused)
  await assert.rejects(reader.batch([{ type: 'put', key: 'c', value: '3' }]), refused)
  await assert.rejects(reader.batch().put('c', '3').write(), refused)
  await assert.rejects(reader.clear(), refused)
  await assert.rejects(reader.compactRange('a', 'z'), refused)
  assert.deepEqual(await entries(reader), [['a', '1'], ['b', '2']])
  await reader.close()
  assert.deepEqual(fs.readdirSync(location).sort(), before)
})

test('readOnly reads a directory real LevelDB (classic-level) holds open, and refuses one that does not exist', async (t) => {
  const location = path.join(tempDir(), 'db')
  const leveldb = new ClassicLevel(location)
  await leveldb.batch([{ type: 'put', key: 'k1', value: 'v1' }, { type: 'put', key: 'k2', value: 'v2' }])
  const reader = new StrataLevel(location, { readOnly: true })
  await reader.open()
  assert.deepEqual(await entries(reader), [['k1', 'v1'], ['k2', 'v2']])
  await reader.close()
  await leveldb.close()

  const missing = new StrataLevel(path.join(tempDir(), 'none'), { readOnly: true })
  await assert.rejects(missing.open(), (err) => {
    assert.equal(err.code, 'LEVEL_DATABASE_NOT_OPEN')
    assert.equal(err.cause.code, 'LEVEL_INVALID_ARGUMENT')
    return true
  })
  assert.equal(fs.existsSync(path.join(tempDir(), 'none')), false)
})

test('checkpoint() copies one moment of the database while writes go on; Strata and LevelDB open the copy', async (t) => {
  const dir = tempDir()
  const db = new StrataLevel(path.join(dir, 'db'), { writeBufferSize: 64 * 1024 })
  // Tables and a live log: enough for a few flushes, then a few writes only in the log.
  for (let start = 0; start < 5000; start += 500) {
    const ops = []
    for (let i = start; i < start + 500; i++) {
      ops.push({ type: 'put', key: String(i).padStart(5, '0'), value: 'v'.repeat(100) })
    }
    await db.batch(ops)
  }
  await db.put('last', 'in the log')
  const copy = path.join(dir, 'copy')
  await db.checkpoint(copy)
  // Later writes are not in the copy.
  await db.put('after', 'x')
  await db.del('00000')

  const expected = 5000 + 1
  for (const Level of [StrataLevel, ClassicLevel]) {
    const opened = new Level(copy)
    await opened.open()
    const all = await entries(opened)
    assert.equal(all.length, expected, `${Level.name} sees the checkpoint's entries`)
    assert.equal(await opened.get('00000'), 'v'.repeat(100))
    assert.equal(await opened.get('last'), 'in the log')
    assert.equal(await opened.get('after'), undefined)
    await opened.close()
  }

  // The target must not exist; a closed database cannot be copied.
  await assert.rejects(db.checkpoint(copy), (err) => {
    assert.equal(err.code, 'LEVEL_INVALID_ARGUMENT')
    return true
  })
  await assert.rejects(() => db.checkpoint(''), TypeError)
  await db.close()
  await assert.rejects(db.checkpoint(path.join(dir, 'other')), { code: 'LEVEL_DATABASE_NOT_OPEN' })
  assert.equal(fs.existsSync(path.join(dir, 'other')), false)
})

test('a read-only handle makes a checkpoint of what it sees', async (t) => {
  const dir = tempDir()
  const location = path.join(dir, 'db')
  const writer = new StrataLevel(location)
  await writer.put('seen', '1')
  const reader = new StrataLevel(location, { readOnly: true })
  await reader.open()
  await writer.put('unseen', '2')
  await reader.checkpoint(path.join(dir, 'copy'))
  await reader.close()
  await writer.close()

  const copy = new StrataLevel(path.join(dir, 'copy'))
  assert.deepEqual(await entries(copy), [['seen', '1']])
  await copy.close()
})
