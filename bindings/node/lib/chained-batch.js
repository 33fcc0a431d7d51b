'use strict'

const { AbstractChainedBatch } = require('abstract-level')

// `db.batch()` without arguments: operations are copied into a native write batch as they are
// added and written atomically by `write()`.
class StrataChainedBatch extends AbstractChainedBatch {
  #db
  #batch

  constructor (db, native, nativeDb) {
    super(db)
    this.#db = nativeDb
    this.#batch = new native.Batch()
  }

  _put (key, value, options) {
    this.#batch.put(key, value)
  }

  _del (key, options) {
    this.#batch.del(key)
  }

  _clear () {
    this.#batch.clear()
  }

  async _write (options) {
    return this.#db.writeBatch(this.#batch, options.sync === true)
  }

  async _close () {
    this.#batch.close()
  }
}

module.exports = { StrataChainedBatch }
