'use strict'

// Seed 000's benchmark: 10M pre-sorted entries (16-byte keys, 100-byte values) written through
// the binding in batches of 1000, as fast as they are acknowledged, with Strata and with
// classic-level (real LevelDB) in turn, --repeat times (who goes first alternating), in one run.
// Each batch's latency is recorded; the run prints, per engine and run, the total time, the CPU
// time the process used meanwhile, where the time went (making the operations in JavaScript;
// the synchronous part of `db.batch()` on the JavaScript thread — abstract-level's checks and
// the binding's copy of the operations into native memory; and waiting for the promise — the
// thread-pool hand-offs and the engine's write), the median, 99th percentile and max batch
// latency, and how many batches took over 10 times the median, and of those how many had one
// of V8's garbage collections (a `gc` performance entry) overlap them; the total time of those
// collections is printed too. Then the medians over the runs and the ratios of the median
// totals, CPU times and times in `db.batch()`. It draws the average latency per write of each
// batch over time, one line per engine (each engine's run with the median total), as an SVG
// (Vega-Lite).
//
//   node bench/sorted-write.js [--num 10000000] [--repeat 3] [--values pool|fresh] [--out out]
//
// Writes <out>/sorted-write.svg and <out>/sorted-write.json.

const fs = require('node:fs')
const path = require('node:path')
const { PerformanceObserver, performance } = require('node:perf_hooks')
const { parseArgs } = require('node:util')
const { ENGINES, assertReleaseBuild, freshDir, removeDir, now, median, random, key, value, values } = require('./common')

const { values: args } = parseArgs({
  options: {
    num: { type: 'string', default: '10000000' },
    repeat: { type: 'string', default: '3' },
    values: { type: 'string', default: 'pool' },
    out: { type: 'string', default: path.join(__dirname, 'out') }
  }
})
const NUM = Number(args.num)
const REPEAT = Number(args.repeat)
const BATCH = 1000
if (!['pool', 'fresh'].includes(args.values)) throw new Error(`--values must be pool or fresh, not ${args.values}`)

// The values' source: `pool` hands out 1024 pregenerated values in turn, as db_bench does and
// as seed 000's benchmark did (it wrote one random buffer over and over); `fresh` builds each
// value by concatenation, which leaves V8 a tree of 50 strings per value to collect.
function valueSource () {
  if (args.values === 'pool') return values(random(42))
  const rand = random(42)
  return () => value(rand)
}

async function run1 (Engine, label) {
  const dir = freshDir(label)
  const db = new Engine(dir)
  await db.open()
  const nextValue = valueSource()
  const latencies = []
  const points = []
  // Each batch's span and each of V8's garbage collections, on performance.now()'s clock,
  // to tell which slow batches a collection fell in.
  const spans = []
  const collections = []
  const collected = (entries) => {
    for (const entry of entries) collections.push([entry.startTime, entry.startTime + entry.duration])
  }
  const observer = new PerformanceObserver((list) => collected(list.getEntries()))
  observer.observe({ entryTypes: ['gc'] })
  let making = 0
  let calling = 0
  let waiting = 0
  const cpuStart = process.cpuUsage()
  const start = now()
  for (let i = 0; i < NUM; i += BATCH) {
    const made = now()
    const ops = []
    for (let j = i; j < Math.min(i + BATCH, NUM); j++) ops.push({ type: 'put', key: key(j), value: nextValue() })
    const before = now()
    const spanStart = performance.now()
    const written = db.batch(ops)
    const called = now()
    await written
    const after = now()
    spans.push([spanStart, performance.now()])
    making += before - made
    calling += called - before
    waiting += after - called
    latencies.push(after - before)
    points.push({ t: after - start, us: (after - before) / ops.length * 1e6 })
  }
  const total = now() - start
  const used = process.cpuUsage(cpuStart)
  collected(observer.takeRecords())
  observer.disconnect()
  // CPU seconds of the whole process (JavaScript and engine threads): less swayed than wall
  // time by other load on the machine.
  const cpu = (used.user + used.system) / 1e6
  const closeStart = now()
  await db.close()
  const close = now() - closeStart
  removeDir(dir)
  return { total, cpu, close, making, calling, waiting, latencies, points, spans, collections }
}

// The figures of one run.
function summarize (run) {
  const sorted = [...run.latencies].sort((a, b) => a - b)
  const med = median(sorted)
  const max = sorted[sorted.length - 1]
  const slow = run.spans.filter((_, i) => run.latencies[i] > 10 * med)
  const collected = ([from, to]) => run.collections.some(([start, end]) => start < to && end > from)
  return {
    total: run.total,
    cpu: run.cpu,
    close: run.close,
    making: run.making,
    calling: run.calling,
    waiting: run.waiting,
    inBatch: run.calling + run.waiting,
    median: med,
    p99: sorted[Math.floor(sorted.length * 0.99)],
    max,
    maxOverMedian: max / med,
    over10xMedian: slow.length,
    over10xWithGc: slow.filter(collected).length,
    gc: run.collections.reduce((sum, [start, end]) => sum + (end - start), 0) / 1e3
  }
}

function row (label, s) {
  const ms = (x) => (x * 1e3).toFixed(3)
  return `| ${label} | ${s.total.toFixed(1)} | ${s.cpu.toFixed(1)} | ${s.making.toFixed(1)} | ${s.calling.toFixed(1)} | ${s.waiting.toFixed(1)} | ${s.gc.toFixed(1)} | ${ms(s.median)} | ${ms(s.p99)} | ${(s.max * 1e3).toFixed(1)} | ${s.maxOverMedian.toFixed(1)} | ${s.over10xMedian} | ${s.over10xWithGc} |`
}

async function main () {
  assertReleaseBuild()
  const names = Object.keys(ENGINES)
  const runs = Object.fromEntries(names.map((name) => [name, []]))
  for (let r = 0; r < REPEAT; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) {
      const run = await run1(ENGINES[name], name)
      runs[name].push(run)
      console.error(`run ${r + 1}/${REPEAT} ${name}: ${run.total.toFixed(1)} s`)
    }
  }

  console.log(`\n${NUM.toLocaleString('en-US')} sorted entries in batches of ${BATCH}, values: ${args.values}, ${REPEAT} runs per engine\n`)
  console.log('| engine, run | total (s) | CPU (s) | making ops (s) | in batch() call (s) | awaiting batch() (s) | V8 GC (s) | median batch (ms) | p99 batch (ms) | max batch (ms) | max / median | batches > 10x median | of those, with a V8 GC in them |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  const summary = {}
  const chosen = {}
  for (const name of names) {
    const figures = runs[name].map(summarize)
    figures.forEach((f, i) => console.log(row(`${name} ${i + 1}`, f)))
    const medianOf = (field) => median(figures.map((f) => f[field]))
    summary[name] = Object.fromEntries(Object.keys(figures[0]).map((field) => [field, medianOf(field)]))
    console.log(row(`**${name} median**`, summary[name]))
    const byTotal = [...runs[name]].sort((a, b) => a.total - b.total)
    chosen[name] = byTotal[(byTotal.length - 1) >> 1]
  }
  const ratio = summary.strata.total / summary['classic-level'].total
  const cpuRatio = summary.strata.cpu / summary['classic-level'].cpu
  const inBatchRatio = summary.strata.inBatch / summary['classic-level'].inBatch
  console.log(`\nStrata's median total time / classic-level's: ${ratio.toFixed(2)}; median CPU time: ${cpuRatio.toFixed(2)}; median time in db.batch() (call + await): ${inBatchRatio.toFixed(2)}`)

  fs.mkdirSync(args.out, { recursive: true })
  const { latencyChart } = await import('./plot.mjs')
  const series = Object.fromEntries(names.map((name) => [name, chosen[name].points]))
  const svg = await latencyChart(series, `${NUM.toLocaleString('en-US')} sorted writes in batches of ${BATCH}: Strata vs classic-level (each engine's median run)`)
  fs.writeFileSync(path.join(args.out, 'sorted-write.svg'), svg)
  const figures = Object.fromEntries(names.map((name) => [name, runs[name].map(summarize)]))
  fs.writeFileSync(path.join(args.out, 'sorted-write.json'), JSON.stringify({ num: NUM, batch: BATCH, values: args.values, repeat: REPEAT, ratio, cpuRatio, inBatchRatio, summary, runs: figures }, null, 2))
  console.log(`chart: ${path.join(args.out, 'sorted-write.svg')}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
