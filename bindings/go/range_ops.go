package strata

/*
#include <stdlib.h>
#include <strata/c.h>
*/
import "C"

import (
	"time"
	"unsafe"
)

// SetRangeDeletes enables DeleteRange and WriteBatch.DeleteRange, an extension of LevelDB's
// format: once a database is opened with it, LevelDB refuses the directory ("does not match
// existing comparator") and Strata opens it only with this option on.
func (o *Options) SetRangeDeletes(b bool) {
	C.strata_options_set_range_deletes(o.opt, boolByte(b))
}

// SetExpiringKeys enables PutWithTTL and WriteBatch.PutWithTTL, an extension of LevelDB's
// format recorded like SetRangeDeletes's.
func (o *Options) SetExpiringKeys(b bool) {
	C.strata_options_set_expiring_keys(o.opt, boolByte(b))
}

// GetMany looks every key up at one moment (the snapshot in ro, or now) and returns their
// values in the same order, nil for a key that is absent. It is faster than a Get per key:
// the keys are looked up sorted, and each table block is read once for neighbouring keys.
// On error no value is returned.
func (db *DB) GetMany(ro *ReadOptions, keys [][]byte) ([][]byte, error) {
	n := len(keys)
	if n == 0 {
		return [][]byte{}, nil
	}
	// The keys go to C in C memory: one buffer holding them all, and arrays of pointers into
	// it and of lengths (cgo forbids passing Go memory that holds Go pointers).
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	buf := unsafe.Slice((*byte)(C.malloc(C.size_t(total+1))), total+1)
	defer C.free(unsafe.Pointer(&buf[0]))
	ptrSize := C.size_t(unsafe.Sizeof(uintptr(0)))
	sizeSize := C.size_t(unsafe.Sizeof(C.size_t(0)))
	cKeys := unsafe.Slice((**C.char)(C.malloc(C.size_t(n)*ptrSize)), n)
	defer C.free(unsafe.Pointer(&cKeys[0]))
	cLens := unsafe.Slice((*C.size_t)(C.malloc(C.size_t(n)*sizeSize)), n)
	defer C.free(unsafe.Pointer(&cLens[0]))
	values := unsafe.Slice((**C.char)(C.malloc(C.size_t(n)*ptrSize)), n)
	defer C.free(unsafe.Pointer(&values[0]))
	valLens := unsafe.Slice((*C.size_t)(C.malloc(C.size_t(n)*sizeSize)), n)
	defer C.free(unsafe.Pointer(&valLens[0]))
	at := 0
	for i, k := range keys {
		copy(buf[at:], k)
		cKeys[i] = (*C.char)(unsafe.Pointer(&buf[at]))
		cLens[i] = C.size_t(len(k))
		at += len(k)
	}
	var errStr *C.char
	C.strata_get_many(db.db, ro.ptr(), C.size_t(n), &cKeys[0], &cLens[0], &values[0],
		&valLens[0], &errStr)
	if err := takeError(errStr); err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for i := range out {
		if values[i] != nil {
			// Each block is ours (malloc'd by the library): copied, then freed.
			out[i] = copyBytes(unsafe.Pointer(values[i]), valLens[i])
			C.leveldb_free(unsafe.Pointer(values[i]))
		}
	}
	return out, nil
}

// DeleteRange deletes every key k with start <= k < end in one write, whatever the range
// holds (SetRangeDeletes must be on; otherwise an error IsNotSupported recognizes).
func (db *DB) DeleteRange(wo *WriteOptions, start, end []byte) error {
	var errStr *C.char
	C.strata_delete_range(db.db, wo.ptr(), ptr(start), C.size_t(len(start)), ptr(end),
		C.size_t(len(end)), &errStr)
	return takeError(errStr)
}

// ClearRange deletes the keys of [start, end) one by one in bounded batches, on any database
// (not atomic as a whole), and returns how many it deleted.
func (db *DB) ClearRange(wo *WriteOptions, start, end []byte) (uint64, error) {
	var errStr *C.char
	n := C.strata_clear_range(db.db, wo.ptr(), ptr(start), C.size_t(len(start)), ptr(end),
		C.size_t(len(end)), &errStr)
	return uint64(n), takeError(errStr)
}

// PutWithTTL sets key to value until ttl from now (by the database's clock, to the
// millisecond, rounded down); after that no read returns it. SetExpiringKeys must be on.
func (db *DB) PutWithTTL(wo *WriteOptions, key, value []byte, ttl time.Duration) error {
	var errStr *C.char
	C.strata_put_with_ttl(db.db, wo.ptr(), ptr(key), C.size_t(len(key)), ptr(value),
		C.size_t(len(value)), ttlMillis(ttl), &errStr)
	return takeError(errStr)
}

// DeleteRange adds a deletion of every key in [start, end) (checked when the batch is
// written: SetRangeDeletes must be on).
func (w *WriteBatch) DeleteRange(start, end []byte) {
	C.strata_writebatch_delete_range(w.batch, ptr(start), C.size_t(len(start)), ptr(end),
		C.size_t(len(end)))
}

// PutWithTTL adds a put of key that expires ttl after the batch is written (SetExpiringKeys
// must be on). Iterate does not report it.
func (w *WriteBatch) PutWithTTL(key, value []byte, ttl time.Duration) {
	C.strata_writebatch_put_with_ttl(w.batch, ptr(key), C.size_t(len(key)), ptr(value),
		C.size_t(len(value)), ttlMillis(ttl))
}

// ttlMillis is ttl in whole milliseconds; a negative ttl is 0 (expired at once).
func ttlMillis(ttl time.Duration) C.uint64_t {
	if ttl < 0 {
		return 0
	}
	return C.uint64_t(ttl / time.Millisecond)
}
