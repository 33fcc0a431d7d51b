'use strict'

const { AbstractLevel } = require('abstract-level')
const ModuleError = require('module-error')
const native = require('./native')
const { StrataChainedBatch } = require('./chained-batch')
const { StrataIterator, StrataKeyIterator, StrataValueIterator } = require('./iterator')
const { StrataSnapshot, nativeSnapshot } = require('./snapshot')

// The options of `open()` (and the constructor) passed through to the engine, under
// classic-level's names; see index.d.ts.
const ENGINE_OPTIONS = [
  'createIfMissing',
  'errorIfExists',
  'compression',
  'cacheSize',
  'writeBufferSize',
  'blockSize',
  'maxOpenFiles',
  'blockRestartInterval',
  'maxFileSize',
  'bloomFilterBits',
  'paranoidChecks',
  'maxSubcompactions',
  'readOnly',
  'valueSeparation'
]

function checkLocation (location) {
  if (typeof location !== 'string' || location === '') {
    throw new TypeError("The first argument 'location' must be a non-empty string")
  }
}

// The options of a native read: reads `fillCache` unless it is false.
function fillCache (options) {
  return options.fillCache !== false
}

// The operations of a batch whose keys and values are all strings, packed for the native side
// (src/batch.rs): every key and value joined into one string, and two lengths per operation
// (in UTF-16 code units): its key's and its value's, -1 for a del. Null when an operation has
// a key or value that is not a string (or a type the native side must refuse): those batches
// go as the array of operations.
function packStrings (operations) {
  const parts = []
  const lengths = new Int32Array(operations.length * 2)
  for (let i = 0; i < operations.length; i++) {
    const { type, key, value } = operations[i]
    if (typeof key !== 'string') return null
    parts.push(key)
    lengths[2 * i] = key.length
    if (type === 'put' && typeof value === 'string') {
      parts.push(value)
      lengths[2 * i + 1] = value.length
    } else if (type === 'del') {
      lengths[2 * i + 1] = -1
    } else {
      return null
    }
  }
  return { text: parts.join(''), lengths }
}

// An abstract-level database over Strata, a storage engine that reads and writes LevelDB's
// on-disk format. Everything that touches the disk runs on libuv's thread pool.
class StrataLevel extends AbstractLevel {
  #location
  // The native database while open, else null.
  #db = null

  constructor (location, options) {
    checkLocation(location)
    super({
      encodings: { buffer: true, utf8: true, view: true },
      has: true,
      getSync: true,
      createIfMissing: true,
      errorIfExists: true,
      implicitSnapshots: true,
      explicitSnapshots: true,
      permanence: true,
      seek: true,
      signals: { iterators: true },
      additionalMethods: { approximateSize: true, compactRange: true, checkpoint: true, refresh: true, head: true }
    }, options)
    this.#location = location
  }

  get location () {
    return this.#location
  }

  async _open (options) {
    const engineOptions = {}
    for (const name of ENGINE_OPTIONS) {
      if (options[name] !== undefined) engineOptions[name] = options[name]
    }
    this.#db = await native.open(this.#location, engineOptions)
  }

  async _close () {
    const db = this.#db
    this.#db = null
    await db.close()
  }

  _get (key, options) {
    return this.#db.get(key, options.valueEncoding === 'utf8', fillCache(options), nativeSnapshot(options))
  }

  _getSync (key, options) {
    return this.#db.getSync(key, options.valueEncoding === 'utf8', fillCache(options), nativeSnapshot(options))
  }

  _getMany (keys, options) {
    return this.#db.getMany(keys, options.valueEncoding === 'utf8', fillCache(options), nativeSnapshot(options))
  }

  _has (key, options) {
    return this.#db.has(key, fillCache(options), nativeSnapshot(options))
  }

  _hasMany (keys, options) {
    return this.#db.hasMany(keys, fillCache(options), nativeSnapshot(options))
  }

  _put (key, value, options) {
    return this.#db.put(key, value, options.sync === true)
  }

  _del (key, options) {
    return this.#db.del(key, options.sync === true)
  }

  _batch (operations, options) {
    const packed = packStrings(operations)
    if (packed !== null) {
      return this.#db.batchPacked(packed.text, packed.lengths, options.sync === true)
    }
    return this.#db.batch(operations, options.sync === true)
  }

  _chainedBatch () {
    return new StrataChainedBatch(this, native, this.#db)
  }

  _clear (options) {
    return this.#db.clear(options, options.limit, nativeSnapshot(options))
  }

  _iterator (options) {
    return new StrataIterator(this, options, this.#nativeIterator(options))
  }

  _keys (options) {
    return new StrataKeyIterator(this, options, this.#nativeIterator({ ...options, keys: true, values: false }))
  }

  _values (options) {
    return new StrataValueIterator(this, options, this.#nativeIterator({ ...options, keys: false, values: true }))
  }

  #nativeIterator (options) {
    return this.#db.iterator({
      gt: options.gt,
      gte: options.gte,
      lt: options.lt,
      lte: options.lte,
      reverse: options.reverse === true,
      keys: options.keys !== false,
      values: options.values !== false,
      keyEncoding: options.keyEncoding,
      valueEncoding: options.valueEncoding,
      fillCache: fillCache(options)
    }, nativeSnapshot(options))
  }

  _snapshot (options) {
    return new StrataSnapshot(options, this.#db.snapshot())
  }

  // The length in bytes of `key`'s value, or undefined when absent, read from the tree alone:
  // a value kept in a value file (`valueSeparation`) is not read. Options as for has():
  // `keyEncoding`, `snapshot`, `fillCache`.
  async head (key, options) {
    if (typeof options !== 'object' || options === null) options = {}
    return this.#whenOpen('head', async () => {
      this._assertValidKey(key)
      const keyEncoding = this.keyEncoding(options.keyEncoding)
      const mappedKey = this.prefixKey(keyEncoding.encode(key), keyEncoding.format, true)
      const snapshot = options.snapshot
      snapshot?.ref()
      try {
        return await this.#db.head(mappedKey, fillCache(options), nativeSnapshot(options))
      } finally {
        snapshot?.unref()
      }
    })
  }

  // Approximate bytes on disk used by the keys in [start, end).
  async approximateSize (start, end, options) {
    return this.#maintenance('approximateSize', start, end, options, arguments.length)
  }

  // Compacts the keys in [start, end] down to the deepest level holding data.
  async compactRange (start, end, options) {
    return this.#maintenance('compactRange', start, end, options, arguments.length)
  }

  // Copies the database as it is now into directory `location`, which must not exist, while
  // writes go on; Strata, classic-level and LevelDB open the copy with that moment's data.
  async checkpoint (location) {
    checkLocation(location)
    return this.#whenOpen('checkpoint', () => this.#db.checkpoint(location))
  }

  // Moves a database opened with `readOnly: true` to its writer's latest state; nothing to do
  // on one opened to write.
  async refresh () {
    return this.#whenOpen('refresh', () => this.#db.refresh())
  }

  // approximateSize() and compactRange(): two keys.
  async #maintenance (method, start, end, options, argumentCount) {
    if (argumentCount < 2) {
      throw new TypeError("The arguments 'start' and 'end' are required")
    }
    if (typeof options !== 'object' || options === null) options = {}
    return this.#whenOpen(method, () => {
      const keyEncoding = this.keyEncoding(options.keyEncoding)
      const from = this.prefixKey(keyEncoding.encode(start), keyEncoding.format, true)
      const to = this.prefixKey(keyEncoding.encode(end), keyEncoding.format, true)
      return this.#db[method](from, to)
    })
  }

  // Calls `call` once the database is open (deferred while it opens); refuses a closed one.
  async #whenOpen (method, call) {
    if (this.status === 'opening') {
      return this.deferAsync(() => this.#whenOpen(method, call))
    }
    if (this.status !== 'open') {
      throw new ModuleError(`Database is not open: cannot call ${method}()`, {
        code: 'LEVEL_DATABASE_NOT_OPEN'
      })
    }
    return call()
  }

  // The value of an engine property: 'leveldb.stats', 'leveldb.sstables',
  // 'leveldb.num-files-at-level<N>' or 'leveldb.approximate-memory-usage'. Synchronous, so it
  // needs an open database. Unknown names give an empty string, as in classic-level.
  getProperty (property) {
    if (typeof property !== 'string') {
      throw new TypeError("The first argument 'property' must be a string")
    }
    if (this.status !== 'open') {
      throw new ModuleError('Database is not open', { code: 'LEVEL_DATABASE_NOT_OPEN' })
    }
    return this.#db.getProperty(property) ?? ''
  }

  // Deletes every file of the database at `location`, which must not be open.
  static async destroy (location) {
    checkLocation(location)
    return native.destroy(location)
  }

  // Rebuilds the database at `location` from whatever of its files can be read.
  static async repair (location) {
    checkLocation(location)
    return native.repair(location)
  }
}

module.exports = { StrataLevel }
