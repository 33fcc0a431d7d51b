'use strict'

// Shared by the binding's own tests: temporary directories and child Node processes.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')

const run = promisify(execFile)

// A fresh directory under the system's temporary directory, removed when the test ends.
function tempDir (t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-kv-test-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

// Runs `script` (CommonJS source) in a child Node process with `args` as process.argv[2..];
// resolves to its standard output, parsed as JSON.
async function inChild (script, ...args) {
  const { stdout } = await run(process.execPath, ['-e', script, ...args], {
    cwd: path.join(__dirname, '..')
  })
  return JSON.parse(stdout)
}

module.exports = { tempDir, inChild }
