'use strict'

// What the benchmarks share: the two engines, fresh database directories, timing, medians and
// a deterministic key and value generator.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ClassicLevel } = require('classic-level')
const { StrataLevel } = require('..')

// The engines compared, by name. Both get their defaults, which are the same (LevelDB's plus
// classic-level's 10-bit bloom filter).
const ENGINES = { strata: StrataLevel, 'classic-level': ClassicLevel }

// The native module must be the release build (`npm run build` in bindings/node): the file
// napi copied from target/release, byte for byte.
function assertReleaseBuild () {
  const file = path.join(__dirname, '..', 'strata-kv.linux-x64-gnu.node')
  const release = path.join(__dirname, '..', 'target', 'x86_64-unknown-linux-gnu', 'release', 'libstrata_node.so')
  if (!fs.existsSync(release) || !fs.readFileSync(file).equals(fs.readFileSync(release))) {
    throw new Error("strata-kv's native module is not the release build: run 'npm run build' first")
  }
}

// A directory for one run's database, under BENCH_DIR or the system's temporary directory.
function freshDir (label) {
  const root = process.env.BENCH_DIR || os.tmpdir()
  return fs.mkdtempSync(path.join(root, `strata-kv-bench-${label}-`))
}

function removeDir (dir) {
  fs.rmSync(dir, { recursive: true, force: true })
}

function now () {
  return Number(process.hrtime.bigint()) / 1e9
}

function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

// xorshift32: the same pseudo-random sequence for every engine and run.
function random (seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

// A 16-digit key for number `n`, as db_bench writes them.
function key (n) {
  return String(n).padStart(16, '0')
}

// A 100-byte value, half of it compressible (db_bench's compression ratio of 0.5).
function value (rand) {
  let s = ''
  for (let i = 0; i < 50; i++) s += String.fromCharCode(97 + Math.floor(rand() * 26))
  return s + 'x'.repeat(50)
}

// A source of `value`s that makes no garbage per value: a pool of distinct values, handed out
// in turn, as db_bench cuts its values out of one pregenerated buffer (seed 000's benchmark
// wrote one random buffer over and over). Each value is a flat string, built with `join`.
function values (rand, size = 1024) {
  const pool = []
  for (let i = 0; i < size; i++) {
    const chars = []
    for (let c = 0; c < 50; c++) chars.push(String.fromCharCode(97 + Math.floor(rand() * 26)))
    pool.push(chars.join('') + 'x'.repeat(50))
  }
  let next = 0
  return () => pool[next++ % size]
}

module.exports = { ENGINES, assertReleaseBuild, freshDir, removeDir, now, median, random, key, value, values }
