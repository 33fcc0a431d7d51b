'use strict'

// Shared by the binding's own tests: temporary directories and child Node processes.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')

const run = promisify(execFile)

// The directories tempDir made, removed when this test file's process exits. Not at the end
// of each test: a test's after-hooks run in the order they were added, so a removal added
// with the directory would run before the hook that closes the database in it, while its
// background threads may still be writing there (ENOTEMPTY).
const made = []
process.on('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
})

// A fresh directory under the system's temporary directory, removed when the process exits.
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-kv-test-'))
  made.push(dir)
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
