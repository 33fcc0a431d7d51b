package strata

/*
#include <leveldb/c.h>
*/
import "C"

import "unsafe"

// Iterator is a cursor over a database's keys in order, forward and backward. It is not safe
// for concurrent use. It starts unpositioned: call Seek, SeekToFirst or SeekToLast first.
//
//	it := db.NewIterator(nil)
//	defer it.Close()
//	for it.SeekToFirst(); it.Valid(); it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.GetError(); err != nil { ... }
type Iterator struct {
	iter *C.leveldb_iterator_t
}

// Valid reports whether the iterator is positioned at an entry.
func (it *Iterator) Valid() bool { return C.leveldb_iter_valid(it.iter) != 0 }

// Key returns a copy of the current key (nil when not Valid).
func (it *Iterator) Key() []byte {
	if !it.Valid() {
		return nil
	}
	var n C.size_t
	k := C.leveldb_iter_key(it.iter, &n)
	// The key is valid until the iterator moves; it is copied now.
	return copyBytes(unsafe.Pointer(k), n)
}

// Value returns a copy of the current value (nil when not Valid).
func (it *Iterator) Value() []byte {
	if !it.Valid() {
		return nil
	}
	var n C.size_t
	v := C.leveldb_iter_value(it.iter, &n)
	// The value is valid until the iterator moves; it is copied now.
	return copyBytes(unsafe.Pointer(v), n)
}

// Next moves to the next entry (no-op when not Valid).
func (it *Iterator) Next() { C.leveldb_iter_next(it.iter) }

// Prev moves to the previous entry (no-op when not Valid).
func (it *Iterator) Prev() { C.leveldb_iter_prev(it.iter) }

// SeekToFirst positions at the first key.
func (it *Iterator) SeekToFirst() { C.leveldb_iter_seek_to_first(it.iter) }

// SeekToLast positions at the last key.
func (it *Iterator) SeekToLast() { C.leveldb_iter_seek_to_last(it.iter) }

// Seek positions at the first key at or after key.
func (it *Iterator) Seek(key []byte) { C.leveldb_iter_seek(it.iter, ptr(key), C.size_t(len(key))) }

// GetError returns the error the iterator met, if any (it then stops being Valid).
func (it *Iterator) GetError() error {
	var errStr *C.char
	C.leveldb_iter_get_error(it.iter, &errStr)
	return takeError(errStr)
}

// Close frees the iterator.
func (it *Iterator) Close() {
	if it.iter != nil {
		C.leveldb_iter_destroy(it.iter)
		it.iter = nil
	}
}
