package strata

/*
#include <stdlib.h>
#include <strata/c.h>
*/
import "C"

import "unsafe"

// OpenReadOnly opens the database in directory name to read it beside the process (Strata or
// LevelDB) that may be writing it: without taking its LOCK and without writing a byte to the
// directory, so it also works on a read-only directory. The DB sees the tables and the live
// logs up to their last whole record, and keeps that state until Refresh. Files the writer
// deletes meanwhile never break a read or an iterator. Put, Delete, Write and CompactRange
// on it fail with an error IsNotSupported recognizes. A missing database is an
// invalid-argument error (SetCreateIfMissing does not apply).
func OpenReadOnly(name string, o *Options) (*DB, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errStr *C.char
	db := C.strata_open_read_only(o.ptr(), cname, &errStr)
	if err := takeError(errStr); err != nil {
		return nil, err
	}
	return &DB{db: db}, nil
}

// Refresh moves a DB opened with OpenReadOnly to the writer's latest state, reading only
// what is new. Every write the writer acknowledged before the call is visible after it;
// iterators and snapshots made before keep the state they were made in. On a DB opened with
// Open it does nothing. On failure the DB keeps its previous state.
func (db *DB) Refresh() error {
	var errStr *C.char
	C.strata_refresh(db.db, &errStr)
	return takeError(errStr)
}

// IsReadOnly reports whether the DB was opened with OpenReadOnly.
func (db *DB) IsReadOnly() bool {
	return C.strata_is_read_only(db.db) != 0
}

// Checkpoint copies the database as it is now into directory dir, which must not exist,
// while writes go on: hard links to its tables (copies across file systems), a fresh
// manifest and the live logs so far, all synced. Strata and LevelDB open the copy with
// exactly that moment's data; a crash during the call leaves dir absent or complete. On a
// read-only DB the copy holds the state it sees.
func (db *DB) Checkpoint(dir string) error {
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	var errStr *C.char
	C.strata_checkpoint(db.db, cdir, &errStr)
	return takeError(errStr)
}
