'use strict'

// Values at the edges (0 bytes, 10 MB) and binary keys with 0x00 and 0xff bytes, through
// every read path: get, getSync, getMany, iterators with ranges, seek and reverse.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { StrataLevel } = require('..')
const { tempDir } = require('./helpers')

const BUFFERS = { keyEncoding: 'buffer', valueEncoding: 'buffer' }

test('empty values and 10 MB values read back exactly, also after reopening', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location, BUFFERS)
  const big = Buffer.alloc(10 * 1024 * 1024)
  for (let i = 0; i < big.length; i += 4) big.writeUInt32LE((i * 2654435761) >>> 0, i)
  await db.put(Buffer.from('empty'), Buffer.alloc(0))
  await db.put(Buffer.from('big'), big)
  await db.batch([{ type: 'put', key: Buffer.from('empty-batch'), value: Buffer.alloc(0) }])
  await db.batch().put(Buffer.from('big-chained'), big).write()

  for (let round = 0; round < 2; round++) {
    assert.deepEqual(await db.get(Buffer.from('empty')), Buffer.alloc(0))
    assert.equal(await db.get('empty', { keyEncoding: 'utf8', valueEncoding: 'utf8' }), '')
    assert.deepEqual(db.getSync(Buffer.from('empty-batch')), Buffer.alloc(0))
    assert.ok((await db.get(Buffer.from('big'))).equals(big))
    assert.ok(db.getSync(Buffer.from('big-chained')).equals(big))
    const many = await db.getMany([Buffer.from('big'), Buffer.from('empty'), Buffer.from('nope')])
    assert.ok(many[0].equals(big))
    assert.deepEqual(many[1], Buffer.alloc(0))
    assert.equal(many[2], undefined)
    assert.deepEqual(await db.hasMany([Buffer.from('empty'), Buffer.from('nope')]), [true, false])
    const sizes = (await db.iterator().all()).map(([key, value]) => [key.toString(), value.length])
    assert.deepEqual(sizes, [['big', big.length], ['big-chained', big.length], ['empty', 0], ['empty-batch', 0]])
    // The second round reads them from tables written at close and recovered at open.
    await db.close()
    await db.open()
  }
  await db.close()
})

test('binary keys with 0x00 and 0xff bytes sort bytewise and bound ranges exactly', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'), BUFFERS)
  const keys = [
    [0x00], [0x00, 0x00], [0x00, 0xff], [0x01], [0x7f], [0x80], [0xfe, 0xff],
    [0xff], [0xff, 0x00], [0xff, 0xff], [0xff, 0xff, 0xff]
  ].map((bytes) => Buffer.from(bytes))
  // Written out of order; values name their key.
  for (const key of [...keys].reverse()) await db.put(key, Buffer.from(key.toString('hex')))
  const hex = (list) => list.map((key) => key.toString('hex'))

  assert.deepEqual(hex(await db.keys().all()), hex(keys))
  assert.deepEqual(hex(await db.keys({ reverse: true }).all()), hex([...keys].reverse()))
  assert.deepEqual(hex(await db.keys({ gt: Buffer.from([0x00]), lte: Buffer.from([0xff]) }).all()), hex(keys.slice(1, 8)))
  assert.deepEqual(hex(await db.keys({ gte: Buffer.from([0xff]), lt: Buffer.from([0xff, 0xff]) }).all()), ['ff', 'ff00'])
  assert.deepEqual(hex(await db.keys({ gt: Buffer.from([0xff, 0xff]) }).all()), ['ffffff'])
  assert.deepEqual(hex(await db.keys({ lte: Buffer.from([0x00, 0x00]), reverse: true }).all()), ['0000', '00'])
  assert.equal((await db.get(Buffer.from([0xff, 0x00]))).toString(), 'ff00')
  assert.equal(await db.get(Buffer.from([0xff, 0x00, 0x00])), undefined)

  const it = db.keys()
  it.seek(Buffer.from([0xfe]))
  assert.equal((await it.next()).toString('hex'), 'feff')
  it.seek(Buffer.from([0x00, 0x01]))
  assert.deepEqual(hex(await it.nextv(2)), ['00ff', '01'])
  await it.close()
  const back = db.keys({ reverse: true, gte: Buffer.from([0x01]) })
  back.seek(Buffer.from([0xff, 0x00, 0x00]))
  assert.deepEqual(hex(await back.all()), ['ff00', 'ff', 'feff', '80', '7f', '01'])

  await db.clear({ gte: Buffer.from([0xff]) })
  assert.deepEqual(hex(await db.keys().all()), hex(keys.slice(0, 7)))
  await db.clear({ lt: Buffer.from([0x01]), reverse: true, limit: 2 })
  assert.deepEqual(hex(await db.keys().all()), ['00', '01', '7f', '80', 'feff'])
  await db.close()
})

test('utf8 values that are not valid UTF-8 read as U+FFFD, as Buffer#toString does', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'))
  const bytes = Buffer.from([0x61, 0xff, 0x62, 0xc3])
  await db.put('k', bytes, { valueEncoding: 'buffer' })
  assert.equal(await db.get('k'), bytes.toString('utf8'))
  assert.equal(db.getSync('k'), bytes.toString('utf8'))
  assert.deepEqual(await db.values().all(), [bytes.toString('utf8')])
  await db.close()
})

test('getMany reads every key at one snapshot', async (t) => {
  const db = new StrataLevel(path.join(tempDir(), 'db'))
  await db.batch([{ type: 'put', key: 'a', value: '1' }, { type: 'put', key: 'b', value: '1' }])
  const snapshot = db.snapshot()
  // Not awaited: the implicit snapshot of getMany is taken when it is called.
  const implicit = db.getMany(['a', 'b'])
  await db.batch([{ type: 'put', key: 'a', value: '2' }, { type: 'del', key: 'b' }])
  assert.deepEqual(await implicit, ['1', '1'])
  assert.deepEqual(await db.getMany(['a', 'b'], { snapshot }), ['1', '1'])
  assert.deepEqual(await db.hasMany(['a', 'b'], { snapshot }), [true, true])
  assert.deepEqual(await db.getMany(['a', 'b']), ['2', undefined])
  await snapshot.close()
  await db.close()
})
