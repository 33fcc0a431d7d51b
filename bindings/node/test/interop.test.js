'use strict'

// Directories written by real LevelDB (classic-level, whose prebuilt binary bundles LevelDB)
// open in Strata with every key and value intact, and the reverse.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { ClassicLevel } = require('classic-level')
const { StrataLevel } = require('..')
const { tempDir } = require('./helpers')

const COUNT = 20000

// Deterministic entries: binary keys (with 0x00 and 0xff bytes), values of varied sizes.
function entries () {
  const result = []
  for (let i = 0; i < COUNT; i++) {
    const key = Buffer.alloc(8)
    key.writeUInt32BE(i * 2654435761 >>> 0, 0)
    key.writeUInt32BE(i, 4)
    if (i % 7 === 0) key[1] = 0x00
    if (i % 11 === 0) key[2] = 0xff
    const value = Buffer.alloc(i % 500, i % 251)
    result.push([key, value])
  }
  return result.sort((a, b) => Buffer.compare(a[0], b[0]))
}

// Writes the entries (in several batches, so that tables and a log are both on disk) and
// deletes every tenth; returns what should remain, in key order.
async function write (db) {
  const all = entries()
  for (let i = 0; i < all.length; i += 1000) {
    await db.batch(all.slice(i, i + 1000).map(([key, value]) => ({ type: 'put', key, value })))
  }
  const kept = []
  for (let i = 0; i < all.length; i++) {
    if (i % 10 === 0) await db.del(all[i][0])
    else kept.push(all[i])
  }
  return kept
}

async function assertHolds (db, expected) {
  const found = await db.iterator().all()
  assert.equal(found.length, expected.length)
  for (let i = 0; i < expected.length; i++) {
    assert.ok(found[i][0].equals(expected[i][0]), `key ${i}`)
    assert.ok(found[i][1].equals(expected[i][1]), `value ${i}`)
  }
  const reversed = await db.keys({ reverse: true, limit: 10 }).all()
  assert.deepEqual(reversed, expected.slice(-10).reverse().map(([key]) => key))
  const [key, value] = expected[Math.floor(expected.length / 2)]
  assert.ok((await db.get(key)).equals(value))
}

const BUFFERS = { keyEncoding: 'buffer', valueEncoding: 'buffer', writeBufferSize: 256 * 1024 }

test('a database written by LevelDB (classic-level) opens in Strata with every entry', async (t) => {
  const location = path.join(tempDir(), 'db')
  const leveldb = new ClassicLevel(location, BUFFERS)
  const expected = await write(leveldb)
  await leveldb.close()

  const strata = new StrataLevel(location, { ...BUFFERS, createIfMissing: false })
  await assertHolds(strata, expected)
  // Strata keeps writing to it, and LevelDB reads that back.
  await strata.put(Buffer.from('written by strata'), Buffer.from('yes'))
  await strata.close()
  const again = new ClassicLevel(location, BUFFERS)
  assert.equal((await again.get(Buffer.from('written by strata'))).toString(), 'yes')
  const withNew = [...expected, [Buffer.from('written by strata'), Buffer.from('yes')]]
  await assertHolds(again, withNew.sort((a, b) => Buffer.compare(a[0], b[0])))
  await again.close()
})

test('a database written by Strata opens in LevelDB (classic-level) with every entry', async (t) => {
  const location = path.join(tempDir(), 'db')
  const strata = new StrataLevel(location, BUFFERS)
  const expected = await write(strata)
  await strata.close()

  const leveldb = new ClassicLevel(location, { ...BUFFERS, createIfMissing: false })
  await assertHolds(leveldb, expected)
  await leveldb.close()
})
