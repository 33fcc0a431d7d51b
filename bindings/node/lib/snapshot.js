'use strict'

const { AbstractSnapshot } = require('abstract-level')

// The native snapshot inside a StrataSnapshot, for the database's read methods.
const kNative = Symbol('native')

// An explicit snapshot: `db.snapshot()`. Reads given `{ snapshot }` see the database as it was
// when the snapshot was taken.
class StrataSnapshot extends AbstractSnapshot {
  constructor (options, native) {
    super(options)
    this[kNative] = native
  }

  async _close () {
    this[kNative].close()
  }
}

// The native snapshot of a read's `snapshot` option, or null for an implicit one.
function nativeSnapshot (options) {
  return options.snapshot?.[kNative] ?? null
}

module.exports = { StrataSnapshot, nativeSnapshot }
