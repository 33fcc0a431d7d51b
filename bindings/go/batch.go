package strata

/*
#include <stdint.h>
#include <leveldb/c.h>
void strata_go_writebatch_iterate(const leveldb_writebatch_t* b, uintptr_t handle);
*/
import "C"

import "runtime/cgo"

// WriteBatch is an atomic group of puts and deletes, applied all or nothing by DB.Write. It
// is not safe for concurrent use.
type WriteBatch struct {
	batch *C.leveldb_writebatch_t
}

// NewWriteBatch returns an empty batch. Close it when done.
func NewWriteBatch() *WriteBatch { return &WriteBatch{batch: C.leveldb_writebatch_create()} }

// Close frees the batch.
func (w *WriteBatch) Close() {
	if w.batch != nil {
		C.leveldb_writebatch_destroy(w.batch)
		w.batch = nil
	}
}

// Put adds a put of key to value.
func (w *WriteBatch) Put(key, value []byte) {
	C.leveldb_writebatch_put(w.batch, ptr(key), C.size_t(len(key)), ptr(value), C.size_t(len(value)))
}

// Delete adds a deletion of key.
func (w *WriteBatch) Delete(key []byte) {
	C.leveldb_writebatch_delete(w.batch, ptr(key), C.size_t(len(key)))
}

// Clear removes every update from the batch.
func (w *WriteBatch) Clear() { C.leveldb_writebatch_clear(w.batch) }

// Append adds the updates of other after this batch's own.
func (w *WriteBatch) Append(other *WriteBatch) { C.leveldb_writebatch_append(w.batch, other.batch) }

// BatchHandler receives the updates of a batch from WriteBatch.Iterate. The slices are
// valid only during the call: copy them to keep them.
type BatchHandler interface {
	Put(key, value []byte)
	Delete(key []byte)
}

// Iterate hands every update of the batch to h, in the order they were added.
func (w *WriteBatch) Iterate(h BatchHandler) {
	handle := cgo.NewHandle(h)
	defer handle.Delete()
	C.strata_go_writebatch_iterate(w.batch, C.uintptr_t(handle))
}
