'use strict'

// Strata against classic-level on 1M small entries (16-byte keys, 100-byte values), both
// through their abstract-level API, in one run. The two engines' databases are open side by
// side and every workload runs in chunks of 10,000 operations, alternating engines chunk by
// chunk (who goes first flips every repeat), so load from elsewhere on the machine falls on
// both alike. Each engine's time for a workload is the sum of its chunks; the table gives the
// median of the repeats and Strata's time as a fraction of classic-level's.
//
//   node bench/workloads.js [--num 1000000] [--repeat 3] [--json out/workloads.json]
//
// Workloads, in this order:
//   put       --num awaited put() calls of random keys, one at a time (per-call cost)
//   batch     --num entries in batches of 1000, random keys (fills the database read next)
//   get       --num awaited get() calls of random existing keys, one at a time
//   getMany   getMany() of 100 random existing keys, --num / 100 calls
//   iterate   every entry, by nextv(1000)

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { ENGINES, assertReleaseBuild, freshDir, removeDir, now, median, random, key, value } = require('./common')

const { values: args } = parseArgs({
  options: {
    num: { type: 'string', default: '1000000' },
    repeat: { type: 'string', default: '3' },
    json: { type: 'string' }
  }
})
const NUM = Number(args.num)
const REPEAT = Number(args.repeat)
const CHUNK = 10000

// A permutation of 0..NUM-1: the order keys are written in, so every key exists once.
function writeOrder (seed) {
  const rand = random(seed)
  const order = Array.from({ length: NUM }, (_, i) => i)
  for (let i = NUM - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    const t = order[i]
    order[i] = order[j]
    order[j] = t
  }
  return order
}

const ORDER = writeOrder(7)

// Each workload: `start(db)` gives its per-engine state, `chunk(state, from, to)` does
// operations [from, to), `finish(state)` checks what was done.
const WORKLOADS = {
  put: {
    start: (dbs) => ({ db: dbs.put, rand: random(11) }),
    async chunk ({ db, rand }, from, to) {
      for (let i = from; i < to; i++) await db.put(key(ORDER[i]), value(rand))
    }
  },
  batch: {
    start: (dbs) => ({ db: dbs.main, rand: random(13) }),
    async chunk ({ db, rand }, from, to) {
      for (let i = from; i < to; i += 1000) {
        const ops = []
        for (let j = i; j < Math.min(i + 1000, to); j++) {
          ops.push({ type: 'put', key: key(ORDER[j]), value: value(rand) })
        }
        await db.batch(ops)
      }
    }
  },
  get: {
    start: (dbs) => ({ db: dbs.main, rand: random(17), found: 0 }),
    async chunk (state, from, to) {
      for (let i = from; i < to; i++) {
        if (await state.db.get(key(Math.floor(state.rand() * NUM))) !== undefined) state.found++
      }
    },
    finish: (state) => state.found === NUM || `get found ${state.found} of ${NUM}`
  },
  getMany: {
    start: (dbs) => ({ db: dbs.main, rand: random(19), found: 0 }),
    async chunk (state, from, to) {
      for (let i = from; i < to; i += 100) {
        const keys = []
        for (let j = 0; j < 100; j++) keys.push(key(Math.floor(state.rand() * NUM)))
        for (const v of await state.db.getMany(keys)) if (v !== undefined) state.found++
      }
    },
    finish: (state) => state.found === NUM || `getMany found ${state.found} of ${NUM}`
  },
  iterate: {
    start: (dbs) => ({ it: dbs.main.iterator(), seen: 0 }),
    // nextv(1000) may return fewer (classic-level stops at 16 KiB): read up to `to` entries.
    async chunk (state, from, to) {
      while (state.seen < to) {
        const entries = await state.it.nextv(1000)
        if (entries.length === 0) break
        state.seen += entries.length
      }
    },
    finish: (state) => state.it.close().then(() =>
      (state.seen === NUM && state.it.count === NUM) || `iterate saw ${state.seen} of ${NUM}`)
  }
}

async function openAll (repeat) {
  const dbs = {}
  for (const [name, Engine] of Object.entries(ENGINES)) {
    dbs[name] = {}
    for (const role of ['put', 'main']) {
      const dir = freshDir(`${name}-${role}-${repeat}`)
      dbs[name][role] = new Engine(dir)
      dbs[name][role].dir = dir
      await dbs[name][role].open()
    }
  }
  return dbs
}

// One repeat: every workload on both engines, chunk by chunk; seconds per engine and workload.
async function runRepeat (repeat) {
  const names = Object.keys(ENGINES)
  const order = repeat % 2 === 0 ? names : [...names].reverse()
  const dbs = await openAll(repeat)
  const seconds = Object.fromEntries(names.map((name) => [name, {}]))
  for (const [workload, spec] of Object.entries(WORKLOADS)) {
    const states = Object.fromEntries(names.map((name) => [name, spec.start(dbs[name])]))
    for (const name of names) seconds[name][workload] = 0
    for (let from = 0; from < NUM; from += CHUNK) {
      const to = Math.min(from + CHUNK, NUM)
      for (const name of order) {
        const start = now()
        await spec.chunk(states[name], from, to)
        seconds[name][workload] += now() - start
      }
    }
    for (const name of names) {
      const ok = spec.finish ? await spec.finish(states[name]) : true
      if (ok !== true) throw new Error(`${name}: ${ok}`)
    }
  }
  for (const name of names) {
    for (const db of Object.values(dbs[name])) {
      await db.close()
      removeDir(db.dir)
    }
    console.error(`repeat ${repeat + 1}/${REPEAT} ${name}: ` +
      Object.entries(seconds[name]).map(([w, s]) => `${w} ${s.toFixed(2)}s`).join(', '))
  }
  return seconds
}

async function main () {
  assertReleaseBuild()
  const runs = { strata: [], 'classic-level': [] }
  for (let r = 0; r < REPEAT; r++) {
    const seconds = await runRepeat(r)
    for (const name of Object.keys(runs)) runs[name].push(seconds[name])
  }

  const rows = []
  console.log(`\n${NUM.toLocaleString('en-US')} entries, median of ${REPEAT} repeats, engines interleaved every ${CHUNK.toLocaleString('en-US')} operations; ratio = Strata's time / classic-level's (below 1: Strata faster)\n`)
  console.log('| workload | strata µs/op | classic-level µs/op | strata ops/s | classic-level ops/s | ratio |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const workload of Object.keys(WORKLOADS)) {
    const strata = median(runs.strata.map((s) => s[workload]))
    const classic = median(runs['classic-level'].map((s) => s[workload]))
    rows.push({ workload, strata, classic, ratio: strata / classic })
    const us = (s) => (s / NUM * 1e6).toFixed(2)
    const ops = (s) => Math.round(NUM / s).toLocaleString('en-US')
    console.log(`| ${workload} | ${us(strata)} | ${us(classic)} | ${ops(strata)} | ${ops(classic)} | ${(strata / classic).toFixed(2)} |`)
  }
  if (args.json) {
    fs.mkdirSync(path.dirname(args.json), { recursive: true })
    fs.writeFileSync(args.json, JSON.stringify({ num: NUM, repeat: REPEAT, chunk: CHUNK, runs, rows }, null, 2))
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
