'use strict'

// abstract-level's own test suite, run against StrataLevel with every feature it declares in
// its manifest (the suite reads `db.supports` and runs the tests each feature enables), then a
// second time on a sublevel (the suite does that by itself).

const test = require('tape')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const suite = require('abstract-level/test')
const { StrataLevel } = require('..')

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-kv-suite-'))
let count = 0

test.onFinish(() => fs.rmSync(root, { recursive: true, force: true }))

suite({
  test,
  factory (options) {
    return new StrataLevel(path.join(root, String(count++)), options)
  }
})
