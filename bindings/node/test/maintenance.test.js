'use strict'

// approximateSize, compactRange, getProperty, and the static destroy and repair.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { StrataLevel } = require('..')
const { tempDir } = require('./helpers')

// Writes `count` entries with 100-byte values in batches, keys '00000'..
async function fill (db, count) {
  for (let start = 0; start < count; start += 1000) {
    const ops = []
    for (let i = start; i < Math.min(start + 1000, count); i++) {
      ops.push({ type: 'put', key: String(i).padStart(5, '0'), value: 'v'.repeat(100) })
    }
    await db.batch(ops)
  }
}

test('approximateSize grows with the data in the range and compactRange pushes it down', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'), { writeBufferSize: 64 * 1024, compression: false })
  await db.open()
  await fill(db, 20000)
  await db.compactRange('00000', '99999')

  const all = await db.approximateSize('00000', '99999')
  const half = await db.approximateSize('00000', '10000')
  const none = await db.approximateSize('a', 'b')
  // 20,000 values of 100 bytes, uncompressed, are on disk after the compaction.
  assert.ok(all >= 20000 * 100, `whole range: ${all} bytes`)
  assert.ok(half > 0 && half < all, `half range: ${half} of ${all} bytes`)
  assert.equal(none, 0)

  assert.equal(db.getProperty('leveldb.num-files-at-level0'), '0', 'the compaction emptied level 0')
  const deeper = [1, 2, 3, 4, 5, 6].map((level) => Number(db.getProperty(`leveldb.num-files-at-level${level}`)))
  assert.ok(deeper.some((n) => n > 0), `tables below level 0: ${deeper}`)
  assert.match(db.getProperty('leveldb.stats'), /Compactions/)
  assert.match(db.getProperty('leveldb.sstables'), /--- level \d ---\n \d+:\d+\['00000'/)
  assert.equal(db.getProperty('leveldb.no-such-property'), '', 'as classic-level')
  assert.throws(() => db.getProperty(1), TypeError)
  await db.close()
  assert.throws(() => db.getProperty('leveldb.stats'), { code: 'LEVEL_DATABASE_NOT_OPEN' })
  await assert.rejects(db.approximateSize('a', 'b'), { code: 'LEVEL_DATABASE_NOT_OPEN' })
  await assert.rejects(db.compactRange('a', 'b'), { code: 'LEVEL_DATABASE_NOT_OPEN' })
})

test('approximateSize and compactRange wait for a database that is opening, and take encodings', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'), { keyEncoding: 'json' })
  await db.put(['a', 1], 'x')
  // Not awaited open: the calls are deferred until it is open.
  const reopened = new StrataLevel(path.join(tempDir(), 'other'))
  const size = reopened.approximateSize('a', 'z')
  assert.equal(reopened.status, 'opening')
  assert.equal(await size, 0)
  await reopened.close()
  await db.compactRange(['a', 0], ['a', 2])
  assert.equal(await db.get(['a', 1]), 'x')
  await assert.rejects(db.approximateSize('a'), TypeError)
  await db.close()
})

test('destroy removes a closed database and refuses an open one', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location)
  await db.put('a', 'b')
  await assert.rejects(StrataLevel.destroy(location), { code: 'LEVEL_LOCKED' })
  await db.close()
  await StrataLevel.destroy(location)
  assert.equal(fs.existsSync(location), false)
  await assert.rejects(StrataLevel.destroy(''), TypeError)
  await assert.rejects(StrataLevel.destroy(7), TypeError)
})

test('repair rebuilds a database whose manifest and CURRENT are gone', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location, { writeBufferSize: 64 * 1024 })
  await fill(db, 5000)
  await db.close()
  for (const file of fs.readdirSync(location)) {
    if (file === 'CURRENT' || file.startsWith('MANIFEST-')) fs.rmSync(path.join(location, file))
  }
  const broken = new StrataLevel(location, { createIfMissing: false })
  await assert.rejects(broken.open(), (err) => err.code === 'LEVEL_DATABASE_NOT_OPEN' && err.cause.code === 'LEVEL_INVALID_ARGUMENT')

  await StrataLevel.repair(location)
  const repaired = new StrataLevel(location, { createIfMissing: false })
  const keys = await repaired.keys().all()
  assert.equal(keys.length, 5000)
  assert.equal(keys[4999], '04999')
  assert.equal(await repaired.get('01234'), 'v'.repeat(100))
  await repaired.close()
})

test('a damaged CURRENT fails open with LEVEL_CORRUPTION as the cause', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location)
  await db.put('a', 'b')
  await db.close()
  fs.writeFileSync(path.join(location, 'CURRENT'), 'MANIFEST-999999\n')
  const reopened = new StrataLevel(location)
  await assert.rejects(reopened.open(), (err) => {
    assert.equal(err.code, 'LEVEL_DATABASE_NOT_OPEN')
    assert.equal(err.cause.code, 'LEVEL_CORRUPTION')
    assert.match(err.cause.message, /CURRENT/)
    return true
  })
})
