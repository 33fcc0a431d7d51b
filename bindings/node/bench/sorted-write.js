'use strict'

// Seed 000's benchmark: 10M pre-sorted entries (16-byte keys, 100-byte values) written through
// the binding in batches of 1000, as fast as they are acknowledged, once with Strata and once
// with classic-level (real LevelDB), in one run. Each batch's latency is recorded; the run
// prints each engine's total time, the ratio of the totals, and the max and median batch
// latencies; and draws the average latency per write of each batch over time, one line per
// engine, as an SVG (Vega-Lite).
//
//   node bench/sorted-write.js [--num 10000000] [--out out]
//
// Writes <out>/sorted-write.svg and <out>/sorted-write.json.

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { ENGINES, assertReleaseBuild, freshDir, removeDir, now, median, random, key, value } = require('./common')

const { values: args } = parseArgs({
  options: {
    num: { type: 'string', default: '10000000' },
    out: { type: 'string', default: path.join(__dirname, 'out') }
  }
})
const NUM = Number(args.num)
const BATCH = 1000

async function run (Engine, label) {
  const dir = freshDir(label)
  const db = new Engine(dir)
  await db.open()
  const rand = random(42)
  const latencies = []
  const points = []
  const start = now()
  for (let i = 0; i < NUM; i += BATCH) {
    const ops = []
    for (let j = i; j < Math.min(i + BATCH, NUM); j++) ops.push({ type: 'put', key: key(j), value: value(rand) })
    const before = now()
    await db.batch(ops)
    const after = now()
    latencies.push(after - before)
    points.push({ t: after - start, us: (after - before) / ops.length * 1e6 })
  }
  const total = now() - start
  const closeStart = now()
  await db.close()
  const close = now() - closeStart
  removeDir(dir)
  return { total, close, latencies, points }
}

async function main () {
  assertReleaseBuild()
  const results = {}
  for (const [name, Engine] of Object.entries(ENGINES)) {
    results[name] = await run(Engine, name)
    console.error(`${name}: ${results[name].total.toFixed(1)} s`)
  }

  console.log(`\n${NUM.toLocaleString('en-US')} sorted entries in batches of ${BATCH}\n`)
  console.log('| engine | total (s) | close (s) | median batch (ms) | max batch (ms) | max / median |')
  console.log('|---|---:|---:|---:|---:|---:|')
  const summary = {}
  for (const [name, r] of Object.entries(results)) {
    const med = median(r.latencies)
    const max = Math.max(...r.latencies)
    summary[name] = { total: r.total, close: r.close, median: med, max, maxOverMedian: max / med }
    console.log(`| ${name} | ${r.total.toFixed(1)} | ${r.close.toFixed(2)} | ${(med * 1e3).toFixed(3)} | ${(max * 1e3).toFixed(1)} | ${(max / med).toFixed(1)} |`)
  }
  const ratio = results.strata.total / results['classic-level'].total
  console.log(`\nStrata's total time / classic-level's: ${ratio.toFixed(2)}`)

  fs.mkdirSync(args.out, { recursive: true })
  const { latencyChart } = await import('./plot.mjs')
  const series = Object.fromEntries(Object.entries(results).map(([name, r]) => [name, r.points]))
  const svg = await latencyChart(series, `${NUM.toLocaleString('en-US')} sorted writes in batches of ${BATCH}: Strata vs classic-level`)
  fs.writeFileSync(path.join(args.out, 'sorted-write.svg'), svg)
  fs.writeFileSync(path.join(args.out, 'sorted-write.json'), JSON.stringify({ num: NUM, batch: BATCH, ratio, summary }, null, 2))
  console.log(`chart: ${path.join(args.out, 'sorted-write.svg')}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
