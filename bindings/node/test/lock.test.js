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

test('a second process opening a database Strata holds gets LEVEL_LOCKED, then opens it once closed', async (t) => {
  const location = path.join(tempDir(t), 'db')
  const db = new StrataLevel(location)
  await db.open()
  assert.deepEqual(await openInChild(location, '.'), LOCKED)
  await db.close()
  assert.deepEqual(await openInChild(location, '.'), { opened: true })
})

test('a second instance in the same process gets LEVEL_LOCKED', async (t) => {
  const location = path.join(tempDir(t), 'db')
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

test('classic-level (real LevelDB) gets LEVEL_LOCKED on a database Strata holds', async (t) => {
  const location = path.join(tempDir(t), 'db')
  const db = new StrataLevel(location)
  await db.open()
  assert.deepEqual(await openInChild(location, 'classic-level'), LOCKED)
  await db.close()
  assert.deepEqual(await openInChild(location, 'classic-level'), { opened: true })
})

test('Strata gets LEVEL_LOCKED on a database classic-level (real LevelDB) holds', async (t) => {
  const location = path.join(tempDir(t), 'db')
  const db = new ClassicLevel(location)
  await db.open()
  assert.deepEqual(await openInChild(location, '.'), LOCKED)
  await db.close()
  assert.deepEqual(await openInChild(location, '.'), { opened: true })
})
