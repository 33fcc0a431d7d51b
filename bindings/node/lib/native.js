'use strict'

// Loads the native module prebuilt for this platform: the package ships
// `strata-kv.<platform>-<arch>[-<libc>].node` beside package.json.

const path = require('node:path')

function platformName () {
  const { platform, arch } = process
  if (platform !== 'linux') return `${platform}-${arch}`
  // Node reports the glibc it runs on; without one the C library is musl.
  const glibc = process.report?.getReport()?.header?.glibcVersionRuntime
  return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`
}

const name = platformName()
const file = path.join(__dirname, '..', `strata-kv.${name}.node`)

try {
  module.exports = require(file)
} catch (err) {
  throw new Error(
    `strata-kv has no native module for ${name} (looked for ${file}). ` +
    "Build one with 'npm run build' in the package's folder (needs a Rust toolchain).",
    { cause: err }
  )
}
