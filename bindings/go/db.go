package strata

/*
#cgo pkg-config: strata
#include <stdlib.h>
#include <leveldb/c.h>
*/
import "C"

import "unsafe"

// DB is an open database. It is safe for concurrent use by many goroutines; Close must be
// the last call.
type DB struct {
	db *C.leveldb_t
}

// Range is a key range for GetApproximateSizes and CompactRange: Start inclusive, Limit
// exclusive for sizes and inclusive for compaction; a nil bound in CompactRange means
// unbounded on that side.
type Range struct {
	Start []byte
	Limit []byte
}

// Snapshot is a consistent point-in-time view of a DB, for reads through
// ReadOptions.SetSnapshot. Release it with DB.ReleaseSnapshot.
type Snapshot struct {
	snap *C.leveldb_snapshot_t
}

// ptr returns a C view of b for the duration of one call (nil for an empty slice, which the C
// API reads as the empty string). Valid under cgo's pointer rules: b holds no Go pointers, and
// every C function it is passed to copies the bytes before returning and keeps no pointer.
func ptr(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// copyBytes copies n bytes at p into a new Go slice. Unlike C.GoBytes, whose length is a C int,
// it takes values of 2 GiB and more (the engine stores values up to 4 GiB - 1).
func copyBytes(p unsafe.Pointer, n C.size_t) []byte {
	out := make([]byte, int(n))
	if n > 0 {
		// p points at n readable bytes owned by the library (see each caller).
		copy(out, unsafe.Slice((*byte)(p), int(n)))
	}
	return out
}

// Open opens the database in directory name (creating it when the options say so).
func Open(name string, o *Options) (*DB, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errStr *C.char
	db := C.leveldb_open(o.ptr(), cname, &errStr)
	if err := takeError(errStr); err != nil {
		return nil, err
	}
	return &DB{db: db}, nil
}

// DestroyDatabase removes the database in directory name, which must not be open.
func DestroyDatabase(name string, o *Options) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errStr *C.char
	C.leveldb_destroy_db(o.ptr(), cname, &errStr)
	return takeError(errStr)
}

// RepairDatabase rebuilds the database in directory name from whatever can still be read,
// for a database that no longer opens. Some data may be lost.
func RepairDatabase(name string, o *Options) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errStr *C.char
	C.leveldb_repair_db(o.ptr(), cname, &errStr)
	return takeError(errStr)
}

// Close waits for background work, releases the database's lock and frees it. Later calls on
// the DB fail with an invalid-argument error.
func (db *DB) Close() {
	if db.db != nil {
		C.leveldb_close(db.db)
		db.db = nil
	}
}

// Put sets key to value.
func (db *DB) Put(wo *WriteOptions, key, value []byte) error {
	var errStr *C.char
	C.leveldb_put(db.db, wo.ptr(), ptr(key), C.size_t(len(key)), ptr(value), C.size_t(len(value)), &errStr)
	return takeError(errStr)
}

// Get returns a copy of the value of key, or nil (and no error) when key is absent. A present
// key with an empty value gives an empty, non-nil slice.
func (db *DB) Get(ro *ReadOptions, key []byte) ([]byte, error) {
	var errStr *C.char
	var length C.size_t
	value := C.leveldb_get(db.db, ro.ptr(), ptr(key), C.size_t(len(key)), &length, &errStr)
	if err := takeError(errStr); err != nil {
		return nil, err
	}
	if value == nil {
		return nil, nil
	}
	// The block is ours (malloc'd by the library); it is copied before the deferred free.
	defer C.leveldb_free(unsafe.Pointer(value))
	return copyBytes(unsafe.Pointer(value), length), nil
}

// Delete removes key; removing an absent key is not an error.
func (db *DB) Delete(wo *WriteOptions, key []byte) error {
	var errStr *C.char
	C.leveldb_delete(db.db, wo.ptr(), ptr(key), C.size_t(len(key)), &errStr)
	return takeError(errStr)
}

// Write applies every update of the batch atomically. The batch is unchanged.
func (db *DB) Write(wo *WriteOptions, w *WriteBatch) error {
	var errStr *C.char
	C.leveldb_write(db.db, wo.ptr(), w.batch, &errStr)
	return takeError(errStr)
}

// NewIterator returns an unpositioned iterator over the database as of now (or as of the
// snapshot in ro). Close it when done.
func (db *DB) NewIterator(ro *ReadOptions) *Iterator {
	return &Iterator{iter: C.leveldb_create_iterator(db.db, ro.ptr())}
}

// NewSnapshot pins the current state of the database.
func (db *DB) NewSnapshot() *Snapshot {
	return &Snapshot{snap: C.leveldb_create_snapshot(db.db)}
}

// ReleaseSnapshot releases a snapshot made by NewSnapshot. Read options that still name it
// keep it pinned until they are closed or given another snapshot.
func (db *DB) ReleaseSnapshot(s *Snapshot) {
	if s != nil && s.snap != nil {
		C.leveldb_release_snapshot(db.db, s.snap)
		s.snap = nil
	}
}

// PropertyValue returns the value of a database property ("leveldb.stats",
// "leveldb.sstables", "leveldb.num-files-at-level<N>", "leveldb.approximate-memory-usage"),
// or "" for an unknown one.
func (db *DB) PropertyValue(name string) string {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	value := C.leveldb_property_value(db.db, cname)
	if value == nil {
		return ""
	}
	defer C.leveldb_free(unsafe.Pointer(value))
	return C.GoString(value)
}

// GetApproximateSizes returns, for each range, the approximate number of bytes the
// database's files use for keys in [Start, Limit).
func (db *DB) GetApproximateSizes(ranges []Range) []uint64 {
	sizes := make([]uint64, len(ranges))
	if len(ranges) == 0 {
		return sizes
	}
	// An array passed to C may not hold Go pointers, so the keys are copied to C memory (freed
	// below); the arrays of their pointers and lengths, and sizes, are Go memory used only
	// during the call, each len(ranges) long.
	starts := make([]*C.char, len(ranges))
	limits := make([]*C.char, len(ranges))
	startLens := make([]C.size_t, len(ranges))
	limitLens := make([]C.size_t, len(ranges))
	for i, r := range ranges {
		starts[i] = (*C.char)(C.CBytes(r.Start))
		limits[i] = (*C.char)(C.CBytes(r.Limit))
		startLens[i] = C.size_t(len(r.Start))
		limitLens[i] = C.size_t(len(r.Limit))
	}
	defer func() {
		for i := range ranges {
			C.free(unsafe.Pointer(starts[i]))
			C.free(unsafe.Pointer(limits[i]))
		}
	}()
	C.leveldb_approximate_sizes(db.db, C.int(len(ranges)),
		&starts[0], &startLens[0], &limits[0], &limitLens[0],
		(*C.uint64_t)(unsafe.Pointer(&sizes[0])))
	return sizes
}

// CompactRange compacts the keys in [r.Start, r.Limit] (nil: unbounded on that side),
// dropping overwritten and deleted entries, and returns when done.
func (db *DB) CompactRange(r Range) {
	var start, limit *C.char
	if r.Start != nil {
		start = (*C.char)(C.CBytes(r.Start))
		defer C.free(unsafe.Pointer(start))
	}
	if r.Limit != nil {
		limit = (*C.char)(C.CBytes(r.Limit))
		defer C.free(unsafe.Pointer(limit))
	}
	C.leveldb_compact_range(db.db, start, C.size_t(len(r.Start)), limit, C.size_t(len(r.Limit)))
}

// GetLevelDBMajorVersion returns the major version of the LevelDB API implemented (1).
func GetLevelDBMajorVersion() int { return int(C.leveldb_major_version()) }

// GetLevelDBMinorVersion returns the minor version of the LevelDB API implemented (23).
func GetLevelDBMinorVersion() int { return int(C.leveldb_minor_version()) }
