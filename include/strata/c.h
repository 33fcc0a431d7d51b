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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_INCLUDE_STRATA_C_H */
