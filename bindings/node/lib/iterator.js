'use strict'

const {
  AbstractIterator,
  AbstractKeyIterator,
  AbstractValueIterator
} = require('abstract-level')
const ModuleError = require('module-error')

// The most a native read may return (its arguments are 32-bit).
const MAX_READ = 0xffffffff
// Entries `next()` reads ahead at first, doubling on each read up to the most.
const FIRST_READ_AHEAD = 8
const MOST_READ_AHEAD = 1000
// Bytes of keys and values `next()` reads ahead at most (classic-level's option name).
const DEFAULT_HIGH_WATER_MARK_BYTES = 16 * 1024

// Rejects a read whose signal was aborted: abstract-level's LEVEL_ABORTED, named AbortError.
class AbortError extends ModuleError {
  constructor () {
    super('Operation has been aborted', { code: 'LEVEL_ABORTED' })
  }

  get name () {
    return 'AbortError'
  }
}

// How a native read's flat array becomes items: `[key, value, key, value, ...]` read as
// entries, or one key or value per item, given as itself or as an entry with a hole (an
// iterator with `keys: false` or `values: false` yields `[undefined, value]` or
// `[key, undefined]`).
const PAIRS = (flat, i) => [flat[i], flat[i + 1]]
const SINGLES = (flat, i) => flat[i]
const KEY_ENTRIES = (flat, i) => [flat[i], undefined]
const VALUE_ENTRIES = (flat, i) => [undefined, flat[i]]
const EMPTY_ENTRIES = (flat, i) => [undefined, undefined]

// The items of an entry iterator with these options.
function entryShape (options) {
  if (options.keys !== false) return options.values !== false ? PAIRS : KEY_ENTRIES
  return options.values !== false ? VALUE_ENTRIES : EMPTY_ENTRIES
}

// The reading machinery the three iterator classes share. A native read returns a flat array
// in one boundary crossing; `next()` serves items from a read-ahead cache that `seek()`
// empties.
class Reader {
  #native
  #signal
  #shape
  #width
  #highWaterMarkBytes
  #readAhead = FIRST_READ_AHEAD
  #cache = []
  #index = 0

  // `shape` is one of the item makers above.
  constructor (native, options, shape) {
    this.#native = native
    this.#signal = options.signal ?? null
    this.#shape = shape
    this.#width = shape === PAIRS ? 2 : 1
    const hwm = options.highWaterMarkBytes
    this.#highWaterMarkBytes = Number.isInteger(hwm) && hwm >= 0
      ? Math.min(hwm, MAX_READ)
      : DEFAULT_HIGH_WATER_MARK_BYTES
  }

  // One item, or undefined at the end. `remaining` bounds the read-ahead by the limit.
  async next (remaining) {
    if (this.#index >= this.#cache.length) {
      if (this.#native.done) return undefined
      const size = Math.min(this.#readAhead, remaining, MAX_READ)
      this.#cache = await this.#read(size, this.#highWaterMarkBytes)
      this.#index = 0
      this.#readAhead = Math.min(this.#readAhead * 2, MOST_READ_AHEAD)
      if (this.#cache.length === 0) return undefined
    }
    const item = this.#shape(this.#cache, this.#index)
    this.#index += this.#width
    return item
  }

  // Up to `size` items (at least one unless at the end).
  async nextv (size) {
    if (this.#index < this.#cache.length) return this.#fromCache(size)
    if (this.#native.done) return []
    return this.#unpack(await this.#read(Math.min(size, MAX_READ), MAX_READ), 0)
  }

  // Every remaining item, up to `remaining`.
  async all (remaining) {
    const cached = this.#fromCache(remaining)
    if (this.#native.done || cached.length >= remaining) return cached
    const flat = await this.#read(Math.min(remaining - cached.length, MAX_READ), MAX_READ)
    return cached.length === 0 ? this.#unpack(flat, 0) : cached.concat(this.#unpack(flat, 0))
  }

  seek (target) {
    this.#native.seek(target)
    this.#cache = []
    this.#index = 0
  }

  close () {
    this.#native.close()
  }

  #fromCache (size) {
    const end = Math.min(this.#cache.length, this.#index + size * this.#width)
    const items = this.#unpack(this.#cache, this.#index, end)
    this.#index = end
    return items
  }

  // The items of `flat[start, end)`.
  #unpack (flat, start, end = flat.length) {
    const shape = this.#shape
    if (shape === SINGLES) return start === 0 && end === flat.length ? flat : flat.slice(start, end)
    const width = this.#width
    const items = new Array((end - start) / width)
    for (let i = start, j = 0; i < end; i += width, j++) items[j] = shape(flat, i)
    return items
  }

  // A native read that an abort of the iterator's signal stops early and rejects.
  async #read (size, maxBytes) {
    const signal = this.#signal
    if (signal === null) return this.#native.nextv(size, maxBytes)
    const native = this.#native
    const onAbort = () => native.abort()
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      const flat = await native.nextv(size, maxBytes)
      if (signal.aborted) throw new AbortError()
      return flat
    } catch (err) {
      throw signal.aborted ? new AbortError() : err
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  }
}

// Remaining items before the iterator's limit.
function remaining (iterator) {
  return iterator.limit - iterator.count
}

// The three iterators differ only in their abstract base class and what an item is.
function readingIterator (Base, shapeOf) {
  return class extends Base {
    #reader

    constructor (db, options, native) {
      super(db, options)
      this.#reader = new Reader(native, options, shapeOf(options))
    }

    async _next () {
      return this.#reader.next(remaining(this))
    }

    async _nextv (size, options) {
      return this.#reader.nextv(size)
    }

    async _all (options) {
      return this.#reader.all(remaining(this))
    }

    _seek (target, options) {
      this.#reader.seek(target)
    }

    async _close () {
      this.#reader.close()
    }
  }
}

const StrataIterator = readingIterator(AbstractIterator, entryShape)
const StrataKeyIterator = readingIterator(AbstractKeyIterator, () => SINGLES)
const StrataValueIterator = readingIterator(AbstractValueIterator, () => SINGLES)

module.exports = { StrataIterator, StrataKeyIterator, StrataValueIterator }
