package strata

// The Go side of the C callbacks in callbacks.c. A file with //export may only declare C
// functions in its preamble, so the trampolines are defined in callbacks.c.

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// view is a Go slice over C memory, valid only while the callback runs.
func view(p *C.char, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}

//export strataGoRelease
func strataGoRelease(handle C.uintptr_t) {
	cgo.Handle(handle).Delete()
}

//export strataGoCompare
func strataGoCompare(handle C.uintptr_t, a *C.char, alen C.size_t, b *C.char, blen C.size_t) C.int {
	compare := cgo.Handle(handle).Value().(func(a, b []byte) int)
	switch r := compare(view(a, alen), view(b, blen)); {
	case r < 0:
		return -1
	case r > 0:
		return 1
	}
	return 0
}

//export strataGoCreateFilter
func strataGoCreateFilter(handle C.uintptr_t, keys **C.char, lens *C.size_t, n C.int, filterLen *C.size_t) *C.char {
	f := cgo.Handle(handle).Value().(*filterFuncs)
	count := int(n)
	keyViews := make([][]byte, count)
	if count > 0 {
		// The library passes n keys and n lengths, valid while this callback runs.
		ptrs := unsafe.Slice(keys, count)
		sizes := unsafe.Slice(lens, count)
		for i := range keyViews {
			keyViews[i] = view(ptrs[i], sizes[i])
		}
	}
	filter := f.create(keyViews)
	*filterLen = C.size_t(len(filter))
	// malloc'd, as the C API requires: the library frees it.
	return (*C.char)(C.CBytes(filter))
}

//export strataGoKeyMayMatch
func strataGoKeyMayMatch(handle C.uintptr_t, key *C.char, keyLen C.size_t, filter *C.char, filterLen C.size_t) C.uint8_t {
	f := cgo.Handle(handle).Value().(*filterFuncs)
	return boolByte(f.mayMatch(view(key, keyLen), view(filter, filterLen)))
}

//export strataGoBatchPut
func strataGoBatchPut(handle C.uintptr_t, k *C.char, klen C.size_t, v *C.char, vlen C.size_t) {
	cgo.Handle(handle).Value().(BatchHandler).Put(view(k, klen), view(v, vlen))
}

//export strataGoBatchDelete
func strataGoBatchDelete(handle C.uintptr_t, k *C.char, klen C.size_t) {
	cgo.Handle(handle).Value().(BatchHandler).Delete(view(k, klen))
}
