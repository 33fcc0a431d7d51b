package strata

/*
#include <strata/c.h>
*/
import "C"

// SetValueSeparation keeps values of at least minValueSize bytes in value files beside the
// tree (0 turns it off, the default), so compactions move small pointers instead of large
// values. The values are compressed as table blocks are (SetCompression: Snappy by default).
// It extends LevelDB's format: once a database is opened with it, LevelDB refuses the directory
// and Strata opens it only with this option on (and, once it holds compressed values, with
// compression on).
func (o *Options) SetValueSeparation(minValueSize int) {
	C.strata_options_set_value_separation(o.opt, C.size_t(clampSize(minValueSize)))
}

// Head reports whether key has a value (as of the snapshot in ro, or now) and the value's
// length, from the tree alone: a value kept in a value file is not read.
func (db *DB) Head(ro *ReadOptions, key []byte) (length uint64, found bool, err error) {
	var errStr *C.char
	var n C.uint64_t
	ok := C.strata_head(db.db, ro.ptr(), ptr(key), C.size_t(len(key)), &n, &errStr)
	if err := takeError(errStr); err != nil {
		return 0, false, err
	}
	return uint64(n), ok != 0, nil
}

// NewKeyIterator returns an iterator over the database's keys (as of the snapshot in ro, or
// now) that never reads a value kept in a value file: Value is empty, and ValueLength gives
// each value's length. Close it as any iterator.
func (db *DB) NewKeyIterator(ro *ReadOptions) *Iterator {
	return &Iterator{iter: C.strata_create_key_iterator(db.db, ro.ptr())}
}

// ValueLength is the length of the value at the iterator's position (from a key iterator,
// without reading it); 0 when not positioned.
func (it *Iterator) ValueLength() uint64 {
	return uint64(C.strata_iter_value_length(it.iter))
}
