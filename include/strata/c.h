/*
 * Strata's extensions to LevelDB's C API: what LevelDB does not have, for the same handles.
 * The functions of leveldb/c.h are unchanged; this header adds functions named strata_*,
 * exported by the same library (libstrata, or libleveldb after `make install-c`).
 *
 * Conventions are leveldb/c.h's: `char** errptr` receives a malloc'd "<Kind>: <details>"
 * message on failure (free it with leveldb_free); NULL handles are an "Invalid argument".
 *
 * Read-only handles
 *   strata_open_read_only opens a database that another process (Strata or LevelDB) may have
 *   open and be writing, without taking its LOCK and without writing a byte to the directory:
 *   it also works on a read-only directory or file system. The handle is a leveldb_t like any
 *   other for reads (leveldb_get, iterators, snapshots, properties, approximate sizes); every
 *   write call on it (leveldb_put, leveldb_delete, leveldb_write, leveldb_compact_range) fails
 *   with a "Not implemented: ..." error. It sees the state at open — the tables and the live
 *   logs up to their last whole record — until strata_refresh. Files the writer deletes meanwhile
 *   never break a read or an iterator. Close it with leveldb_close.
 *
 * Checkpoints
 *   strata_checkpoint copies a database, as it is at that moment, into a new directory while
 *   writes go on: hard links to its tables (copies across file systems), a fresh manifest and
 *   the live logs so far, all synced. Strata and LevelDB open the copy with exactly that
 *   moment's data. A crash during the call leaves the directory absent or complete.
 *
 * Batched reads
 *   strata_get_many looks many keys up at one moment (one view of the database, as at a
 *   snapshot): faster than one leveldb_get per key, since the keys are looked up sorted, each
 *   table block once for neighbouring keys. Works on every database.
 *
 * Range deletes and expiring keys (format extensions)
 *   strata_delete_range deletes every key of [start, end) with one record, whatever it holds;
 *   strata_put_with_ttl writes a value no read returns once its time to live has passed (the
 *   key reads as deleted; compactions reclaim it). Both extend LevelDB's format: they fail with
 *   "Not implemented: ..." unless the database is opened with strata_options_set_range_deletes
 *   / strata_options_set_expiring_keys, and from that open on LevelDB refuses the directory
 *   ("does not match existing comparator") and Strata needs the option. strata_clear_range
 *   deletes a range key by key in bounded batches on any database, LevelDB's format kept.
 *
 * Value separation (a format extension)
 *   strata_options_set_value_separation keeps values at or above a size in value files beside
 *   the tree, so compactions move small pointers instead of large values; from the first open
 *   with it on, LevelDB refuses the directory and Strata needs the option. strata_head answers
 *   whether a key has a value and its length without reading a value file (on any database),
 *   and strata_create_key_iterator walks keys with their values' lengths the same way.
 */

#ifndef STRATA_INCLUDE_STRATA_C_H
#define STRATA_INCLUDE_STRATA_C_H

#include "leveldb/c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the database in directory `name` read-only (see above); NULL and *errptr set on
 * failure, e.g. when it does not exist (create_if_missing and error_if_exists do not apply). */
leveldb_t* strata_open_read_only(const leveldb_options_t* options, const char* name,
                                 char** errptr);

/* Moves a read-only handle to the writer's latest state, reading only what is new. Every write
 * the writer acknowledged before the call began is visible after it returns; iterators and
 * snapshots made before keep the state they were made in. Does nothing on a handle opened
 * with leveldb_open. On failure the handle keeps its previous state. */
void strata_refresh(leveldb_t* db, char** errptr);

/* 1 for a handle opened with strata_open_read_only, 0 otherwise (and for NULL). */
uint8_t strata_is_read_only(const leveldb_t* db);

/* Writes a checkpoint of `db` into directory `dir`, which must not exist (see above). On a
 * read-only handle, the copy holds the state the handle sees. */
void strata_checkpoint(leveldb_t* db, const char* dir, char** errptr);

/* Enables the range-deletes / expiring-keys format extension for databases opened with these
 * options (see above; default off). */
void strata_options_set_range_deletes(leveldb_options_t* options, uint8_t v);
void strata_options_set_expiring_keys(leveldb_options_t* options, uint8_t v);

/* Looks up keys[i] (keylens[i] bytes) for i < num_keys, all at one moment (the snapshot of
 * `options`, or now). values[i] receives a malloc'd copy of the value (free it with
 * leveldb_free) and vallens[i] its length, or NULL and 0 when the key is absent. On failure
 * every values[i] is NULL and *errptr is set. */
void strata_get_many(leveldb_t* db, const leveldb_readoptions_t* options, size_t num_keys,
                     const char* const* keys, const size_t* keylens, char** values,
                     size_t* vallens, char** errptr);

/* Deletes every key k with start <= k < end in one write (range deletes must be enabled);
 * start > end is an "Invalid argument". */
void strata_delete_range(leveldb_t* db, const leveldb_writeoptions_t* options,
                         const char* start, size_t startlen, const char* end, size_t endlen,
                         char** errptr);

/* Deletes the keys of [start, end) one by one in bounded batches (not atomic as a whole) on
 * any database; returns how many it deleted. */
uint64_t strata_clear_range(leveldb_t* db, const leveldb_writeoptions_t* options,
                            const char* start, size_t startlen, const char* end, size_t endlen,
                            char** errptr);

/* Sets key to val until ttl_millis milliseconds from now, by the clock of the database's
 * environment (expiring keys must be enabled). */
void strata_put_with_ttl(leveldb_t* db, const leveldb_writeoptions_t* options, const char* key,
                         size_t keylen, const char* val, size_t vallen, uint64_t ttl_millis,
                         char** errptr);

/* The same two updates inside a write batch (leveldb_writebatch_iterate skips them). Writing
 * the batch fails unless the database enables the extension. */
void strata_writebatch_delete_range(leveldb_writebatch_t* b, const char* start, size_t startlen,
                                    const char* end, size_t endlen);
void strata_writebatch_put_with_ttl(leveldb_writebatch_t* b, const char* key, size_t klen,
                                    const char* val, size_t vlen, uint64_t ttl_millis);

/* Keeps values of at least min_value_size bytes in value files beside the tree (0: off, the
 * default), compressed as table blocks are (leveldb_options_set_compression: Snappy by
 * default). From the first open with it on, LevelDB refuses the directory and Strata needs
 * the option (and, once values were stored compressed, compression on). */
void strata_options_set_value_separation(leveldb_options_t* options, size_t min_value_size);

/* 1 with *vallen set to the length of key's value when key has one (at the snapshot of
 * `options`, or now), 0 when it has none or on failure (*errptr set). Answered from the tree
 * alone: a value kept in a value file is not read. */
uint8_t strata_head(leveldb_t* db, const leveldb_readoptions_t* options, const char* key,
                    size_t keylen, uint64_t* vallen, char** errptr);

/* A new, unpositioned iterator over db's keys (at the snapshot of `options`, or now); NULL for
 * a NULL db. Every leveldb_iter_* call works on it; leveldb_iter_value gives an empty value and
 * strata_iter_value_length the value's length. It reads no value file. Destroy it with
 * leveldb_iter_destroy. */
leveldb_iterator_t* strata_create_key_iterator(leveldb_t* db,
                                               const leveldb_readoptions_t* options);

/* The length of the value at the position of `it` (any iterator); 0 when not valid or NULL. */
uint64_t strata_iter_value_length(const leveldb_iterator_t* it);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_INCLUDE_STRATA_C_H */
