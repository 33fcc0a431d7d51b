/*
 * Strata's C API: the functions, types and behaviour of LevelDB 1.23's C interface, so that
 * programs and bindings written against LevelDB's C API compile and link against Strata
 * (libstrata, or libleveldb after `make install-c`) with no source change.
 *
 * Conventions
 *   - Objects are opaque pointers. Each is made by a *_create function (or leveldb_open) and
 *     freed by the matching *_destroy function (or leveldb_close).
 *   - Keys and values are a pointer plus a length and may contain any byte, NUL included.
 *   - Booleans are uint8_t: 0 is false, anything else true.
 *   - A function that can fail takes `char** errptr` as its last argument. Set `*errptr` to
 *     NULL before the call. On failure it receives a malloc'd, NUL-terminated message of the
 *     form "<Kind>: <details>" with Kind one of "Corruption", "Invalid argument", "IO error",
 *     "Not implemented"; a message already in *errptr is freed and replaced. On success
 *     *errptr is not touched. Free messages with leveldb_free().
 *   - Buffers this library returns (values, property values, paths, messages) are malloc'd;
 *     free them with leveldb_free().
 *
 * Thread safety
 *   A leveldb_t may be used by many threads at once (leveldb_close excepted). Iterators,
 *   write batches and options objects must not be used by two threads at the same time.
 *   Comparator and filter-policy callbacks may be called from several threads at once,
 *   including Strata's background thread.
 *
 * Lifetimes
 *   Comparators, filter policies, caches and envs given to an options object are shared by
 *   reference count: destroying one releases the caller's reference, and a C destructor
 *   callback runs when nothing uses the object any more. Set NULL to go back to the default.
 */

#ifndef STRATA_INCLUDE_LEVELDB_C_H
#define STRATA_INCLUDE_LEVELDB_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Opaque types ---------------------------------------------------------------------- */

typedef struct leveldb_t leveldb_t;                       /* an open database */
typedef struct leveldb_cache_t leveldb_cache_t;           /* a shared LRU block cache */
typedef struct leveldb_comparator_t leveldb_comparator_t; /* a key order from callbacks */
typedef struct leveldb_env_t leveldb_env_t;               /* the file system and clock */
typedef struct leveldb_filelock_t leveldb_filelock_t;     /* declared for compatibility only */
typedef struct leveldb_filterpolicy_t leveldb_filterpolicy_t; /* per-table key filters */
typedef struct leveldb_iterator_t leveldb_iterator_t;     /* a cursor over a database */
typedef struct leveldb_logger_t leveldb_logger_t;         /* no function makes one */
typedef struct leveldb_options_t leveldb_options_t;       /* how a database is opened */
typedef struct leveldb_randomfile_t leveldb_randomfile_t; /* declared for compatibility only */
typedef struct leveldb_readoptions_t leveldb_readoptions_t;   /* options for reads */
typedef struct leveldb_seqfile_t leveldb_seqfile_t;       /* declared for compatibility only */
typedef struct leveldb_snapshot_t leveldb_snapshot_t;     /* a pinned point-in-time view */
typedef struct leveldb_writablefile_t leveldb_writablefile_t; /* declared for compatibility only */
typedef struct leveldb_writebatch_t leveldb_writebatch_t; /* an atomic group of updates */
typedef struct leveldb_writeoptions_t leveldb_writeoptions_t; /* options for writes */

/* ---- Database -------------------------------------------------------------------------- */

/* Opens the database in directory `name`. Returns NULL and sets *errptr on failure (missing
 * database without create_if_missing, existing one with error_if_exists, LOCK held by another
 * process or by another open in this process, comparator name mismatch, corruption...).
 * NULL options mean the defaults. */
leveldb_t* leveldb_open(const leveldb_options_t* options, const char* name, char** errptr);

/* Waits for background work to finish, releases the LOCK and frees the handle. */
void leveldb_close(leveldb_t* db);

/* Sets key to val. NULL write options mean the defaults. */
void leveldb_put(leveldb_t* db, const leveldb_writeoptions_t* options, const char* key,
                 size_t keylen, const char* val, size_t vallen, char** errptr);

/* Removes key; removing an absent key is not an error. */
void leveldb_delete(leveldb_t* db, const leveldb_writeoptions_t* options, const char* key,
                    size_t keylen, char** errptr);

/* Applies every update in batch atomically. The batch is unchanged and can be reused. */
void leveldb_write(leveldb_t* db, const leveldb_writeoptions_t* options,
                   leveldb_writebatch_t* batch, char** errptr);

/* Returns the value of key in a malloc'd buffer of *vallen bytes (no NUL is appended; an
 * empty value gives a non-NULL buffer and *vallen == 0). A missing key gives NULL with
 * *vallen == 0 and *errptr untouched; an error gives NULL and sets *errptr. */
char* leveldb_get(leveldb_t* db, const leveldb_readoptions_t* options, const char* key,
                  size_t keylen, size_t* vallen, char** errptr);

/* A new iterator, not yet positioned: call one of the seek functions first. It sees the
 * database as of its creation, or as of the snapshot in options. */
leveldb_iterator_t* leveldb_create_iterator(leveldb_t* db, const leveldb_readoptions_t* options);

/* Pins the current state for reads through leveldb_readoptions_set_snapshot. */
const leveldb_snapshot_t* leveldb_create_snapshot(leveldb_t* db);

/* Frees a snapshot made by leveldb_create_snapshot on db. */
void leveldb_release_snapshot(leveldb_t* db, const leveldb_snapshot_t* snapshot);

/* The value of a property as a malloc'd NUL-terminated string, or NULL for an unknown name.
 * Known: "leveldb.num-files-at-level<N>", "leveldb.stats", "leveldb.sstables",
 * "leveldb.approximate-memory-usage". */
char* leveldb_property_value(leveldb_t* db, const char* propname);

/* For each i < num_ranges, stores in sizes[i] the approximate number of bytes the files hold
 * for keys in [range_start_key[i], range_limit_key[i]). Data still in memory is not counted. */
void leveldb_approximate_sizes(leveldb_t* db, int num_ranges,
                               const char* const* range_start_key,
                               const size_t* range_start_key_len,
                               const char* const* range_limit_key,
                               const size_t* range_limit_key_len, uint64_t* sizes);

/* Compacts keys in [start_key, limit_key], dropping overwritten and deleted entries. A NULL
 * start_key means from the first key, a NULL limit_key up to the last. Returns when done. */
void leveldb_compact_range(leveldb_t* db, const char* start_key, size_t start_key_len,
                           const char* limit_key, size_t limit_key_len);

/* Deletes the database in directory `name`. The database must not be open. */
void leveldb_destroy_db(const leveldb_options_t* options, const char* name, char** errptr);

/* Rebuilds the database in `name` from the tables and logs that can still be read, for a
 * database that no longer opens. Some data may be lost. */
void leveldb_repair_db(const leveldb_options_t* options, const char* name, char** errptr);

/* ---- Iterator -------------------------------------------------------------------------- */

void leveldb_iter_destroy(leveldb_iterator_t* iter);
/* 1 when the iterator is positioned at an entry. */
uint8_t leveldb_iter_valid(const leveldb_iterator_t* iter);
void leveldb_iter_seek_to_first(leveldb_iterator_t* iter);
void leveldb_iter_seek_to_last(leveldb_iterator_t* iter);
/* Positions at the first key at or after k (invalid when there is none). */
void leveldb_iter_seek(leveldb_iterator_t* iter, const char* k, size_t klen);
void leveldb_iter_next(leveldb_iterator_t* iter);
void leveldb_iter_prev(leveldb_iterator_t* iter);
/* The current key and value. The memory belongs to the iterator and stays valid until it
 * is moved or destroyed. Call only while leveldb_iter_valid() returns 1. */
const char* leveldb_iter_key(const leveldb_iterator_t* iter, size_t* klen);
const char* leveldb_iter_value(const leveldb_iterator_t* iter, size_t* vlen);
/* Sets *errptr when the iterator met an error (it then stops being valid). */
void leveldb_iter_get_error(const leveldb_iterator_t* iter, char** errptr);

/* ---- Write batch ----------------------------------------------------------------------- */

leveldb_writebatch_t* leveldb_writebatch_create(void);
void leveldb_writebatch_destroy(leveldb_writebatch_t* batch);
/* Removes every update from the batch. */
void leveldb_writebatch_clear(leveldb_writebatch_t* batch);
void leveldb_writebatch_put(leveldb_writebatch_t* batch, const char* key, size_t klen,
                            const char* val, size_t vlen);
void leveldb_writebatch_delete(leveldb_writebatch_t* batch, const char* key, size_t klen);
/* Calls put or deleted for each update, in the order the updates were added. */
void leveldb_writebatch_iterate(const leveldb_writebatch_t* batch, void* state,
                                void (*put)(void* state, const char* k, size_t klen,
                                            const char* v, size_t vlen),
                                void (*deleted)(void* state, const char* k, size_t klen));
/* Adds the updates of source after those of destination. */
void leveldb_writebatch_append(leveldb_writebatch_t* destination,
                               const leveldb_writebatch_t* source);

/* ---- Options --------------------------------------------------------------------------- */

/* Defaults: bytewise order, no creation, 4 MiB write buffer, 1000 open files, an 8 MiB cache
 * per database, 4 KiB blocks, a restart point every 16 keys, 2 MiB tables, Snappy. */
leveldb_options_t* leveldb_options_create(void);
void leveldb_options_destroy(leveldb_options_t* options);
/* The key order; the comparator's name is recorded in the database and checked at open. */
void leveldb_options_set_comparator(leveldb_options_t* options, leveldb_comparator_t* cmp);
/* Per-table filters that let reads skip tables without the key (NULL: none). */
void leveldb_options_set_filter_policy(leveldb_options_t* options,
                                       leveldb_filterpolicy_t* policy);
void leveldb_options_set_create_if_missing(leveldb_options_t* options, uint8_t v);
void leveldb_options_set_error_if_exists(leveldb_options_t* options, uint8_t v);
/* Fail on any corruption met instead of skipping what cannot be read. */
void leveldb_options_set_paranoid_checks(leveldb_options_t* options, uint8_t v);
void leveldb_options_set_env(leveldb_options_t* options, leveldb_env_t* env);
/* Accepted and ignored: Strata always writes its info log to the LOG file in the database
 * directory. */
void leveldb_options_set_info_log(leveldb_options_t* options, leveldb_logger_t* logger);
/* Bytes gathered in memory before they are written to a table; clipped to [64 KiB, 1 GiB]. */
void leveldb_options_set_write_buffer_size(leveldb_options_t* options, size_t size);
/* Table files kept open; clipped to [74, 50000]. */
void leveldb_options_set_max_open_files(leveldb_options_t* options, int n);
void leveldb_options_set_cache(leveldb_options_t* options, leveldb_cache_t* cache);
/* Uncompressed bytes per data block; clipped to [1 KiB, 4 MiB]. */
void leveldb_options_set_block_size(leveldb_options_t* options, size_t size);
/* Keys between restart points within a block; at least 1. */
void leveldb_options_set_block_restart_interval(leveldb_options_t* options, int n);
/* Bytes written to one table before the next is started; clipped to [1 MiB, 1 GiB]. */
void leveldb_options_set_max_file_size(leveldb_options_t* options, size_t size);

/* Values for leveldb_options_set_compression; other values leave the setting unchanged. */
enum { leveldb_no_compression = 0, leveldb_snappy_compression = 1 };
void leveldb_options_set_compression(leveldb_options_t* options, int type);

/* ---- Comparator ------------------------------------------------------------------------ */

/* A comparator from callbacks over `state`. compare returns <0, 0 or >0 as a is before,
 * equal to or after b; name returns a NUL-terminated name (read once, now). destructor, if
 * not NULL, is called with state once the comparator is no longer used. Returns NULL when
 * compare or name is NULL. */
leveldb_comparator_t* leveldb_comparator_create(
    void* state, void (*destructor)(void* state),
    int (*compare)(void* state, const char* a, size_t alen, const char* b, size_t blen),
    const char* (*name)(void* state));
void leveldb_comparator_destroy(leveldb_comparator_t* cmp);

/* ---- Filter policy --------------------------------------------------------------------- */

/* A filter policy from callbacks over `state`. create_filter returns a malloc'd filter of
 * *filter_length bytes summarising the num_keys keys (the library frees it); key_may_match
 * returns 0 only when key was certainly not among the keys the filter was made from. The name
 * is stored in each table and read once, now. Returns NULL when a required callback is NULL. */
leveldb_filterpolicy_t* leveldb_filterpolicy_create(
    void* state, void (*destructor)(void* state),
    char* (*create_filter)(void* state, const char* const* key_array,
                           const size_t* key_length_array, int num_keys,
                           size_t* filter_length),
    uint8_t (*key_may_match)(void* state, const char* key, size_t length, const char* filter,
                             size_t filter_length),
    const char* (*name)(void* state));
void leveldb_filterpolicy_destroy(leveldb_filterpolicy_t* policy);

/* LevelDB's bloom filter with about bits_per_key bits a key (10 gives about 1% false
 * positives); compatible with the tables LevelDB writes with its own bloom filter. */
leveldb_filterpolicy_t* leveldb_filterpolicy_create_bloom(int bits_per_key);

/* ---- Read options ---------------------------------------------------------------------- */

/* Defaults: no checksum verification, fill the cache, read the latest state. */
leveldb_readoptions_t* leveldb_readoptions_create(void);
void leveldb_readoptions_destroy(leveldb_readoptions_t* options);
void leveldb_readoptions_set_verify_checksums(leveldb_readoptions_t* options, uint8_t v);
/* Whether blocks read are kept in the cache (turn off for bulk scans). */
void leveldb_readoptions_set_fill_cache(leveldb_readoptions_t* options, uint8_t v);
/* Read as of snapshot; NULL reads the latest state. */
void leveldb_readoptions_set_snapshot(leveldb_readoptions_t* options,
                                      const leveldb_snapshot_t* snapshot);

/* ---- Write options --------------------------------------------------------------------- */

leveldb_writeoptions_t* leveldb_writeoptions_create(void);
void leveldb_writeoptions_destroy(leveldb_writeoptions_t* options);
/* When 1, a write returns only once the log is synced to stable storage. */
void leveldb_writeoptions_set_sync(leveldb_writeoptions_t* options, uint8_t v);

/* ---- Cache ----------------------------------------------------------------------------- */

/* An LRU cache of up to capacity bytes of uncompressed blocks, shareable by databases. */
leveldb_cache_t* leveldb_cache_create_lru(size_t capacity);
void leveldb_cache_destroy(leveldb_cache_t* cache);

/* ---- Env ------------------------------------------------------------------------------- */

/* The POSIX file system. */
leveldb_env_t* leveldb_create_default_env(void);
void leveldb_env_destroy(leveldb_env_t* env);
/* A malloc'd path of a directory for tests ($TEST_TMPDIR, else /tmp/leveldbtest-<euid>),
 * created if needed; NULL on failure. Free with leveldb_free(). */
char* leveldb_env_get_test_directory(leveldb_env_t* env);

/* ---- Utility --------------------------------------------------------------------------- */

/* Frees a buffer returned by this library (values, property values, paths, error messages). */
void leveldb_free(void* ptr);

/* The version of LevelDB's C API implemented: 1 and 23. */
int leveldb_major_version(void);
int leveldb_minor_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_INCLUDE_LEVELDB_C_H */
