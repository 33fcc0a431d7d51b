'use strict'

// `npm pack` runs this first: the package must carry the native module for linux-x64-gnu, the
// platform it is published for, so that installing it needs no Rust toolchain.

const fs = require('node:fs')
const path = require('node:path')

const file = path.join(__dirname, '..', 'strata-kv.linux-x64-gnu.node')
if (!fs.existsSync(file)) {
  console.error(`${file} is missing: run 'npm run build' (release) before packing`)
  process.exit(1)
}
