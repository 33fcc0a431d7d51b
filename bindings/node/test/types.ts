// Compiled (not run) by `tsc --noEmit` in `make test-node`: the declarations in index.d.ts
// accept what the README shows and the options the binding adds.

import { StrataLevel, ClassicLevel } from 'strata-kv'

async function main (): Promise<void> {
  const db = new StrataLevel<string, { n: number }>('./db', { valueEncoding: 'json', cacheSize: 32 << 20, bloomFilterBits: 10 })
  await db.put('a', { n: 1 }, { sync: true })
  const value: { n: number } | undefined = await db.get('a', { fillCache: false })
  const many: Array<{ n: number } | undefined> = await db.getMany(['a', 'b'])
  const found: boolean = await db.has('a')
  const sync: { n: number } | undefined = db.getSync('a')
  await db.batch([{ type: 'put', key: 'b', value: { n: 2 } }, { type: 'del', key: 'a' }], { sync: false })
  await db.batch().put('c', { n: 3 }).del('b').write()
  for await (const [key, entry] of db.iterator({ gte: 'a', limit: 10, highWaterMarkBytes: 1024 })) {
    console.log(key.toUpperCase(), entry.n)
  }
  const keys: string[] = await db.keys({ reverse: true }).all()
  const size: number = await db.approximateSize('a', 'z')
  await db.compactRange('a', 'z')
  const stats: string = db.getProperty('leveldb.stats')
  const snapshot = db.snapshot()
  await db.get('a', { snapshot })
  await snapshot.close()
  await db.close()
  await StrataLevel.destroy('./db')
  await ClassicLevel.repair('./db')
  console.log(value, many, found, sync, keys, size, stats)
}

void main
