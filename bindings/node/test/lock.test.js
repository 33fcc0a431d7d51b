'use strict'

// The LOCK file keeps a second opener out with LEVEL_LOCKED: another Strata instance of this
// process, another process, and real LevelDB (classic-level) in either direction — Strata and
// LevelDB take the same POSIX record lock.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { ClassicLevel } = require('classic-level')
const { StrataLevel } = require('..')
const { tempDir, inChild } = require('./helpers')

// A child process that opens argv[2] with the named package's class and prints the codes of
// the failure ({ code, cause }), or { opened: true }.
const OPEN_IN_CHILD = `
const [location, pkg] = process.argv.slice(1)
const { ClassicLevel, StrataLevel } = require(pkg)
const Level = StrataLevel ?? ClassicLevel
const db = new Level(location)
db.open().then(
  () => db.close().then(() => console.log(JSON.stringify({ opened: true }))),
  (err) => console.log(JSON.stringify({ code: err.code, cause: err.cause?.code }))
)
`

function openInChild (location, pkg) {
  return inChild(OPEN_IN_CHILD, location, pkg)
}

const LOCKED = { code: 'LEVEL_DATABASE_NOT_OPEN', cause: 'LEVEL_LOCKED' }

// Who holds the directory, and which package a second process opens it with.
const CASES = [
  ['Strata', StrataLevel, 'strata-kv', '.'],
  ['Strata', StrataLevel, 'classic-level (real LevelDB)', 'classic-level'],
  ['classic-level (real LevelDB)', ClassicLevel, 'strata-kv', '.']
]

for (const [holderName, Holder, openerName, opener] of CASES) {
  test(`${openerName} in a second process gets LEVEL_LOCKED while ${holderName} holds the database, and opens it once closed`, async (t) => {
    const location = path.join(tempDir(), 'db')
    const db = new Holder(location)
    await db.open()
    assert.deepEqual(await openInChild(location, opener), LOCKED)
    await db.close()
    assert.deepEqual(await openInChild(location, opener), { opened: true })
  })
}

test('a second instance in the same process gets LEVEL_LOCKED', async (t) => {
  const location = path.join(tempDir(), 'db')
  const db = new StrataLevel(location)
  await db.open()
  const second = new StrataLevel(location)
  await assert.rejects(second.open(), (err) => {
    assert.equal(err.code, 'LEVEL_DATABASE_NOT_OPEN')
    assert.equal(err.cause.code, 'LEVEL_LOCKED')
    assert.match(err.cause.message, /LOCK/)
    return true
  })
  await db.close()
  await second.open()
  await second.close()
})
