import {
  AbstractLevel,
  AbstractDatabaseOptions,
  AbstractOpenOptions,
  AbstractGetOptions,
  AbstractGetManyOptions,
  AbstractHasOptions,
  AbstractHasManyOptions,
  AbstractPutOptions,
  AbstractDelOptions,
  AbstractBatchOptions,
  AbstractBatchOperation,
  AbstractChainedBatch,
  AbstractIterator,
  AbstractIteratorOptions,
  AbstractKeyIterator,
  AbstractKeyIteratorOptions,
  AbstractValueIterator,
  AbstractValueIteratorOptions
} from 'abstract-level'

/**
 * An `abstract-level` database backed by Strata, a storage engine that reads and writes
 * LevelDB's on-disk format. A drop-in replacement for classic-level's `ClassicLevel`.
 */
export class StrataLevel<KDefault = string, VDefault = string>
  extends AbstractLevel<string | Buffer | Uint8Array, KDefault, VDefault> {
  /**
   * @param location Directory of the database; created (with its parents) on open unless
   * `createIfMissing` is false.
   */
  constructor (location: string, options?: DatabaseOptions<KDefault, VDefault> | undefined)

  /** The directory given to the constructor. */
  get location (): string

  open (): Promise<void>
  open (options: OpenOptions): Promise<void>

  get (key: KDefault): Promise<VDefault | undefined>
  get<K = KDefault, V = VDefault> (key: K, options: GetOptions<K, V>): Promise<V | undefined>

  getSync (key: KDefault): VDefault | undefined
  getSync<K = KDefault, V = VDefault> (key: K, options: GetOptions<K, V>): V | undefined

  getMany (keys: KDefault[]): Promise<(VDefault | undefined)[]>
  getMany<K = KDefault, V = VDefault> (keys: K[], options: GetManyOptions<K, V>): Promise<(V | undefined)[]>

  has (key: KDefault): Promise<boolean>
  has<K = KDefault> (key: K, options: HasOptions<K>): Promise<boolean>

  hasMany (keys: KDefault[]): Promise<boolean[]>
  hasMany<K = KDefault> (keys: K[], options: HasManyOptions<K>): Promise<boolean[]>

  /**
   * The length in bytes of `key`'s value, or `undefined` when absent, read from the tree alone:
   * with `valueSeparation`, a value kept in a value file is not read, so this costs what a
   * `get` of a small value does. Strata's own method (classic-level has none).
   */
  head (key: KDefault): Promise<number | undefined>
  head<K = KDefault> (key: K, options: HasOptions<K>): Promise<number | undefined>

  put (key: KDefault, value: VDefault): Promise<void>
  put<K = KDefault, V = VDefault> (key: K, value: V, options: PutOptions<K, V>): Promise<void>

  del (key: KDefault): Promise<void>
  del<K = KDefault> (key: K, options: DelOptions<K>): Promise<void>

  batch (operations: Array<AbstractBatchOperation<typeof this, KDefault, VDefault>>): Promise<void>
  batch<K = KDefault, V = VDefault> (
    operations: Array<AbstractBatchOperation<typeof this, K, V>>,
    options: BatchOptions<K, V>
  ): Promise<void>
  batch (): AbstractChainedBatch<typeof this, KDefault, VDefault>

  iterator (): AbstractIterator<typeof this, KDefault, VDefault>
  iterator<K = KDefault, V = VDefault> (options: IteratorOptions<K, V>): AbstractIterator<typeof this, K, V>

  keys (): AbstractKeyIterator<typeof this, KDefault>
  keys<K = KDefault> (options: KeyIteratorOptions<K>): AbstractKeyIterator<typeof this, K>

  values (): AbstractValueIterator<typeof this, KDefault, VDefault>
  values<K = KDefault, V = VDefault> (options: ValueIteratorOptions<K, V>): AbstractValueIterator<typeof this, K, V>

  /** Approximate bytes on disk used by the keys in `[start, end)`. */
  approximateSize (start: KDefault, end: KDefault): Promise<number>
  approximateSize<K = KDefault> (start: K, end: K, options: KeyEncodingOptions<K>): Promise<number>

  /** Compacts the keys in `[start, end]` down to the deepest level that holds data. */
  compactRange (start: KDefault, end: KDefault): Promise<void>
  compactRange<K = KDefault> (start: K, end: K, options: KeyEncodingOptions<K>): Promise<void>

  /**
   * The value of an engine property: `'leveldb.stats'`, `'leveldb.sstables'`,
   * `'leveldb.num-files-at-level<N>'` or `'leveldb.approximate-memory-usage'`; an empty
   * string for other names, as in classic-level. Synchronous: the database must be open.
   */
  getProperty (property: string): string

  /**
   * Copies the database as it is now into directory `location`, which must not exist, while
   * writes go on: hard links to its tables, a fresh manifest and the live logs so far, all
   * synced. Strata, classic-level and LevelDB open the copy with exactly that moment's data.
   * On a database opened with `readOnly: true`, the copy holds what it sees.
   */
  checkpoint (location: string): Promise<void>

  /**
   * Moves a database opened with `readOnly: true` to its writer's latest state: every write
   * the writer acknowledged before the call is visible after it. Iterators and snapshots made
   * before keep their state. Does nothing on a database opened to write.
   */
  refresh (): Promise<void>

  /** Deletes every file of the database at `location`, which must not be open. */
  static destroy (location: string): Promise<void>

  /** Rebuilds the database at `location` from whatever of its files can be read. */
  static repair (location: string): Promise<void>
}

/** The same class under classic-level's name, for a one-line switch. */
export { StrataLevel as ClassicLevel }

/** Options of `open()`, which the constructor also takes. Sizes are in bytes. */
export interface OpenOptions extends AbstractOpenOptions {
  /** Snappy-compress table blocks. Default true. */
  compression?: boolean | undefined
  /** Size of the block cache of uncompressed blocks. Default 8 MiB. */
  cacheSize?: number | undefined
  /** Bytes of writes gathered in memory before they are written to a table. Default 4 MiB. */
  writeBufferSize?: number | undefined
  /** Uncompressed size of a table block. Default 4 KiB. */
  blockSize?: number | undefined
  /** Table files kept open. Default 1000. */
  maxOpenFiles?: number | undefined
  /** Keys between restart points of a block. Default 16. */
  blockRestartInterval?: number | undefined
  /** Bytes written to a table before a new one is started. Default 2 MiB. */
  maxFileSize?: number | undefined
  /** Bits per key of each table's bloom filter, 0 for none (at most 64). Default 10. */
  bloomFilterBits?: number | undefined
  /** Fail on any corruption met, including while recovering the log. Default false. */
  paranoidChecks?: boolean | undefined
  /** Threads one compaction may run on (1 to 16). Default 2. */
  maxSubcompactions?: number | undefined
  /**
   * Open to read only, beside the process (Strata, classic-level or LevelDB) that may have the
   * database open and be writing: no `LOCK` is taken and nothing is written, so it also works
   * on a read-only directory. Shows the state at open until `refresh()`. Writes (`put`, `del`,
   * `batch`, `clear`, `compactRange`) fail with `LEVEL_NOT_SUPPORTED`; `createIfMissing` and
   * `errorIfExists` do not apply. Default false.
   */
  readOnly?: boolean | undefined
  /**
   * Keep values of at least this many bytes in value files beside the tree (Leveled's design):
   * compactions move small pointers instead of the values, `head()` and `keys()` never read
   * them, and garbage collection keeps the value files within 1.5 times the live value bytes.
   * 0 (the default) is off and keeps the database in LevelDB's format; a database that ever had
   * it on is refused by LevelDB and classic-level, and by Strata without it.
   */
  valueSeparation?: number | undefined
}

export interface DatabaseOptions<K, V> extends AbstractDatabaseOptions<K, V>, Omit<OpenOptions, 'passive'> {}

export interface ReadOptions {
  /** Keep the blocks this read loads in the block cache. Default true. */
  fillCache?: boolean | undefined
}

export interface WriteOptions {
  /** Sync the log to disk before the write is acknowledged. Default false. */
  sync?: boolean | undefined
}

export interface GetOptions<K, V> extends AbstractGetOptions<K, V>, ReadOptions {}
export interface GetManyOptions<K, V> extends AbstractGetManyOptions<K, V>, ReadOptions {}
export interface HasOptions<K> extends AbstractHasOptions<K>, ReadOptions {}
export interface HasManyOptions<K> extends AbstractHasManyOptions<K>, ReadOptions {}
export interface PutOptions<K, V> extends AbstractPutOptions<K, V>, WriteOptions {}
export interface DelOptions<K> extends AbstractDelOptions<K>, WriteOptions {}
export interface BatchOptions<K, V> extends AbstractBatchOptions<K, V>, WriteOptions {}

export interface IteratorReadOptions extends ReadOptions {
  /** Bytes of keys and values `next()` reads ahead at most. Default 16 KiB. */
  highWaterMarkBytes?: number | undefined
}

export interface IteratorOptions<K, V> extends AbstractIteratorOptions<K, V>, IteratorReadOptions {}
export interface KeyIteratorOptions<K> extends AbstractKeyIteratorOptions<K>, IteratorReadOptions {}
export interface ValueIteratorOptions<K, V> extends AbstractValueIteratorOptions<K, V>, IteratorReadOptions {}

export interface KeyEncodingOptions<K> {
  keyEncoding?: AbstractGetOptions<K, unknown>['keyEncoding']
}
