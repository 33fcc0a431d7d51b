'use strict'

// The `valueSeparation` option, `head()`, and reads of keys alone (`keys()`, `clear()`) that
// never touch value files.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { StrataLevel } = require('..')
const { tempDir } = require('./helpers')

const large = (length, fill) => Buffer.alloc(length, fill)

function valueFiles (location) {
  return fs.readdirSync(location).filter((name) => name.endsWith('.vlog'))
}

test('head answers value lengths, at a snapshot too', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location, { valueSeparation: 1024, valueEncoding: 'buffer' })
  t.after(() => db.close())
  await db.put('large', large(50000, 'l'))
  await db.put('small', large(10, 's'))
  await db.put('empty', Buffer.alloc(0))
  assert.equal(await db.head('large'), 50000)
  assert.equal(await db.head('small'), 10)
  assert.equal(await db.head('empty'), 0)
  assert.equal(await db.head('absent'), undefined)
  assert.deepEqual(await db.get('large'), large(50000, 'l'))
  assert.ok(valueFiles(location).length > 0, 'the large value is in a value file')

  const snapshot = db.snapshot()
  t.after(() => snapshot.close())
  await db.put('large', large(70000, 'm'))
  await db.del('small')
  assert.equal(await db.head('large'), 70000)
  assert.equal(await db.head('small'), undefined)
  assert.equal(await db.head('large', { snapshot }), 50000)
  assert.equal(await db.head('small', { snapshot }), 10)
  assert.equal(await db.head(Buffer.from('large'), { keyEncoding: 'buffer', fillCache: false }), 70000)
})

test('head works without value separation and refuses misuse', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'))
  await db.put('k', 'v'.repeat(5000))
  assert.equal(await db.head('k'), 5000)
  await assert.rejects(db.head(null), { code: 'LEVEL_INVALID_KEY' })
  await db.close()
  await assert.rejects(db.head('k'), { code: 'LEVEL_DATABASE_NOT_OPEN' })
  assert.deepEqual(valueFiles(db.location), [], 'off by default: LevelDB format')
})

test('head waits for a database that is opening', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'), { valueSeparation: 100 })
  t.after(() => db.close())
  const length = db.head('k')
  await db.put('k', 'x'.repeat(300))
  assert.equal(await length, undefined, 'deferred until open, before the put')
  assert.equal(await db.head('k'), 300)
})

test('keys(), head() and clear() never read value files', async (t) => {
  const location = path.join(tempDir(), 'db')
  const keys = []
  {
    const db = new StrataLevel(location, { valueSeparation: 1024 })
    for (let i = 0; i < 20; i++) {
      keys.push(`key${String(i).padStart(2, '0')}`)
      await db.put(keys[i], 'v'.repeat(4000 + i))
    }
    await db.compactRange('key', 'key~')
    await db.close()
  }
  // Damage every value: each file's bytes are flipped past its first record's header.
  for (const name of valueFiles(location)) {
    const file = path.join(location, name)
    const bytes = fs.readFileSync(file)
    for (let i = 64; i < bytes.length; i += 97) bytes[i] ^= 0xff
    fs.writeFileSync(file, bytes)
  }
  const db = new StrataLevel(location, { valueSeparation: 1024 })
  t.after(() => db.close())
  await assert.rejects(db.get('key05'), /corruption/i, 'a value read finds the damage')
  await assert.rejects(db.values().all(), /corruption/i)
  assert.deepEqual(await db.keys().all(), keys)
  assert.deepEqual(await db.keys({ reverse: true, gte: 'key10' }).all(), keys.slice(10).reverse())
  assert.deepEqual(await db.iterator({ values: false }).all(), keys.map((key) => [key, undefined]))
  assert.equal(await db.head('key07'), 4007)
  await db.clear({ lt: 'key10' })
  assert.deepEqual(await db.keys().all(), keys.slice(10))
})

test('a database with value files is refused without the option', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location, { valueSeparation: 1024 })
  await db.put('k', 'v'.repeat(5000))
  await db.close()
  const plain = new StrataLevel(location)
  await assert.rejects(plain.open(), (err) => {
    assert.match(String(err.cause ?? err), /value_separation/)
    return true
  })
  await assert.rejects(new StrataLevel(location, { valueSeparation: -1 }).open(), (err) => {
    assert.match(String(err.cause ?? err), /valueSeparation/)
    return true
  })
})

for (const compression of [true, false]) {
  test(`separated values are compressed as blocks are (compression: ${compression})`, async () => {
    const location = path.join(tempDir(), 'db')
    const db = new StrataLevel(location, { valueSeparation: 1024, compression, valueEncoding: 'buffer' })
    await db.open()
    for (let i = 0; i < 100; i++) {
      await db.put(`key${String(i).padStart(5, '0')}`, large(4000, 'v'))
    }
    const total = Number(db.getProperty('strata.value-files.total-bytes'))
    // 400,000 bytes of one repeated letter: Snappy stores a small share of them.
    assert.ok(compression ? total < 100000 : total > 400000, `${total} bytes`)
    assert.deepEqual(await db.get('key00007'), large(4000, 'v'))
    await db.close()
    if (compression) {
      const plain = new StrataLevel(location, { valueSeparation: 1024, compression: false })
      await assert.rejects(plain.open(), (err) => /value-compression/.test(err.cause ? err.cause.message : err.message))
    }
  })
}
