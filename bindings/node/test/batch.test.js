'use strict'

// db.batch([...]) with string keys and values crosses to the native side packed (one string,
// lengths in UTF-16 code units; lib/level.js, src/batch.rs): it must store exactly the bytes
// that put() of each string stores — for every kind of string — and batches with other
// values must still go the other way. The native side refuses packed input that does not
// add up, with an error instead of a crash.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { StrataLevel } = require('..')
const native = require('../lib/native')
const { tempDir } = require('./helpers')

// Strings whose UTF-8 is not their UTF-16 read byte by byte: empty, ASCII, Latin-1, CJK, a
// surrogate pair (emoji), lone surrogates (each becomes U+FFFD), and a high surrogate at the
// end of one string followed by a low one at the start of the next, which are not a pair.
const STRINGS = ['', 'plain', 'caf\u00e9', '\u6f22\u5b57', '\ud83d\ude00 grin', 'lone \ud800', '\udc00 lone', 'a\0b', '\uffff']

// Every stored entry as [key bytes, value bytes] in hex.
async function stored (db) {
  const all = await db.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' }).all()
  return all.map(([key, value]) => [key.toString('hex'), value.toString('hex')])
}

test('a batch of strings stores what put() of each string stores', async (t) => {
  const dir = tempDir()
  const batched = new StrataLevel(path.join(dir, 'batched'))
  const single = new StrataLevel(path.join(dir, 'single'))
  const ops = []
  for (const [i, key] of STRINGS.entries()) {
    for (const [j, value] of STRINGS.entries()) {
      ops.push({ type: 'put', key: `${key}|${i}|${j}`, value })
      await single.put(`${key}|${i}|${j}`, value)
    }
    // A key ending in a high surrogate with a value starting with a low one.
    ops.push({ type: 'put', key: `${i}\ud83d`, value: '\ude00' })
    await single.put(`${i}\ud83d`, '\ude00')
  }
  await batched.batch(ops)
  const expected = await stored(single)
  assert.equal(expected.length, STRINGS.length * (STRINGS.length + 1))
  assert.deepEqual(await stored(batched), expected)
  assert.equal(await batched.get('\ud83d\ude00 grin|4|4'), '\ud83d\ude00 grin')
  assert.equal(await batched.get('0\ud83d'), '\ufffd', 'a lone low surrogate is U+FFFD')
  await batched.close()
  await single.close()
})

test('dels, and batches mixing strings with buffers or other encodings', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'))
  await db.batch([
    { type: 'put', key: 'a', value: '1' },
    { type: 'put', key: 'b', value: '2' },
    { type: 'put', key: 'c', value: '3' },
    { type: 'del', key: 'b' },
    { type: 'put', key: 'b', value: '' },
    { type: 'del', key: 'c' },
    { type: 'del', key: 'never' }
  ])
  assert.deepEqual(await db.iterator().all(), [['a', '1'], ['b', '']])

  // A buffer among strings: the whole batch goes as operations, in order.
  await db.batch([
    { type: 'put', key: 'x', value: 'string' },
    { type: 'put', key: Buffer.from('y'), value: Buffer.from([0xff, 0x00]), keyEncoding: 'buffer', valueEncoding: 'buffer' },
    { type: 'del', key: 'a' },
    { type: 'put', key: 'z', value: { n: 1 }, valueEncoding: 'json' }
  ])
  assert.deepEqual(await db.get('y', { valueEncoding: 'buffer' }), Buffer.from([0xff, 0x00]))
  assert.deepEqual(await db.iterator().all(), [['b', ''], ['x', 'string'], ['y', '\ufffd\0'], ['z', '{"n":1}']])

  // Sublevels prefix their keys before the batch reaches the database.
  const sub = db.sublevel('s')
  await sub.batch([{ type: 'put', key: 'k', value: 'v' }, { type: 'del', key: 'gone' }])
  assert.equal(await db.get('!s!k'), 'v')
  await db.close()
})

test('packed input that does not add up is refused with LEVEL_INVALID_ARGUMENT and writes nothing', async (t) => {
  const db = await native.open(path.join(tempDir(), 'db'), {})
  const refused = { code: 'LEVEL_INVALID_ARGUMENT', message: 'Malformed packed batch' }
  for (const lengths of [[1], [5, 0], [1, 0], [1, 1, 1, 1], [-2, 0], [0, -2], [2, -1, 1, 0]]) {
    assert.throws(() => db.batchPacked('ab', Int32Array.from(lengths), false), refused, `lengths ${lengths}`)
  }
  await db.batchPacked('ab', Int32Array.from([1, 1]), false)
  await db.batchPacked('c', Int32Array.from([1, -1]), false)
  assert.equal(await db.get('a', true, true, null), 'b')
  assert.equal(await db.get('ab', true, true, null), undefined, 'nothing of the refused batches')
  assert.equal(await db.get('c', true, true, null), undefined)
  await db.close()
})
