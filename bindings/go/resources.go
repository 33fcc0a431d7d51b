package strata

/*
#include <stdint.h>
#include <stdlib.h>
#include <leveldb/c.h>
leveldb_comparator_t* strata_go_comparator_create(uintptr_t handle, const char* name);
leveldb_filterpolicy_t* strata_go_filterpolicy_create(uintptr_t handle, const char* name);
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// Cache is an LRU cache of uncompressed table blocks that databases may share.
type Cache struct {
	cache *C.leveldb_cache_t
}

// NewLRUCache returns a cache holding up to capacity bytes. Close it when done; databases
// using it keep it alive until they close.
func NewLRUCache(capacity int) *Cache {
	return &Cache{cache: C.leveldb_cache_create_lru(C.size_t(clampSize(capacity)))}
}

func (c *Cache) ptr() *C.leveldb_cache_t {
	if c == nil {
		return nil
	}
	return c.cache
}

// Close releases the cache.
func (c *Cache) Close() {
	if c.cache != nil {
		C.leveldb_cache_destroy(c.cache)
		c.cache = nil
	}
}

// Env is the file system and clock a database uses.
type Env struct {
	env *C.leveldb_env_t
}

// NewDefaultEnv returns the POSIX environment. Close it when done.
func NewDefaultEnv() *Env { return &Env{env: C.leveldb_create_default_env()} }

func (e *Env) ptr() *C.leveldb_env_t {
	if e == nil {
		return nil
	}
	return e.env
}

// TestDirectory returns a directory for tests: $TEST_TMPDIR, or /tmp/leveldbtest-<euid>,
// created if needed ("" when it cannot be made).
func (e *Env) TestDirectory() string {
	dir := C.leveldb_env_get_test_directory(e.env)
	if dir == nil {
		return ""
	}
	defer C.leveldb_free(unsafe.Pointer(dir))
	return C.GoString(dir)
}

// Close releases the env.
func (e *Env) Close() {
	if e.env != nil {
		C.leveldb_env_destroy(e.env)
		e.env = nil
	}
}

// FilterPolicy makes per-table filters that let reads skip tables without a key.
type FilterPolicy struct {
	policy *C.leveldb_filterpolicy_t
}

// NewBloomFilter returns LevelDB's bloom filter with about bitsPerKey bits per key (10 gives
// about 1% false positives); tables written with it are read by LevelDB and back.
func NewBloomFilter(bitsPerKey int) *FilterPolicy {
	return &FilterPolicy{policy: C.leveldb_filterpolicy_create_bloom(C.int(clampInt(bitsPerKey)))}
}

// filterFuncs are the Go halves of a custom filter policy.
type filterFuncs struct {
	create   func(keys [][]byte) []byte
	mayMatch func(key, filter []byte) bool
}

// NewFilterPolicy returns a filter policy made of Go functions: create summarises a set of
// keys, and mayMatch must return true for every key the filter was made from. The name is
// stored in each table. Both functions may run on several threads at once, must not panic
// and must not keep the slices they are given.
func NewFilterPolicy(name string, create func(keys [][]byte) []byte,
	mayMatch func(key, filter []byte) bool) *FilterPolicy {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	h := cgo.NewHandle(&filterFuncs{create: create, mayMatch: mayMatch})
	return &FilterPolicy{policy: C.strata_go_filterpolicy_create(C.uintptr_t(h), cname)}
}

func (p *FilterPolicy) ptr() *C.leveldb_filterpolicy_t {
	if p == nil {
		return nil
	}
	return p.policy
}

// Close releases the policy; databases using it keep it alive until they close.
func (p *FilterPolicy) Close() {
	if p.policy != nil {
		C.leveldb_filterpolicy_destroy(p.policy)
		p.policy = nil
	}
}

// Comparator is a key order made of a Go function.
type Comparator struct {
	cmp *C.leveldb_comparator_t
}

// NewComparator returns a comparator named name ordering keys by compare (negative, zero or
// positive as a sorts before, with or after b). The name is stored in the database and
// checked at every open. compare may run on several threads at once, must not panic and must
// not keep the slices it is given.
func NewComparator(name string, compare func(a, b []byte) int) *Comparator {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	h := cgo.NewHandle(compare)
	return &Comparator{cmp: C.strata_go_comparator_create(C.uintptr_t(h), cname)}
}

func (c *Comparator) ptr() *C.leveldb_comparator_t {
	if c == nil {
		return nil
	}
	return c.cmp
}

// Close releases the comparator; databases using it keep it alive until they close.
func (c *Comparator) Close() {
	if c.cmp != nil {
		C.leveldb_comparator_destroy(c.cmp)
		c.cmp = nil
	}
}
