package strata

/*
#include <stdlib.h>
#include <leveldb/c.h>
*/
import "C"

import (
	"errors"
	"strings"
	"unsafe"
)

// DatabaseError is an error reported by the database. Its text has LevelDB's form,
// "<Kind>: <details>", with Kind one of "Corruption", "Invalid argument", "IO error" and
// "Not implemented".
type DatabaseError string

func (e DatabaseError) Error() string { return string(e) }

// takeError turns a C error message into a DatabaseError and frees it; nil for no message.
func takeError(msg *C.char) error {
	if msg == nil {
		return nil
	}
	err := DatabaseError(C.GoString(msg))
	C.leveldb_free(unsafe.Pointer(msg))
	return err
}

// hasKind reports whether err is a DatabaseError of the given kind.
func hasKind(err error, kind string) bool {
	var dbErr DatabaseError
	return errors.As(err, &dbErr) && strings.HasPrefix(string(dbErr), kind+": ")
}

// IsCorruption reports whether err says stored data was found damaged.
func IsCorruption(err error) bool { return hasKind(err, "Corruption") }

// IsInvalidArgument reports whether err says the request could not be done as asked (for
// example opening a missing database without SetCreateIfMissing, or using a closed DB).
func IsInvalidArgument(err error) bool { return hasKind(err, "Invalid argument") }

// IsIOError reports whether err comes from the file system (including a database locked by
// another process or another open DB).
func IsIOError(err error) bool { return hasKind(err, "IO error") }

// IsNotSupported reports whether err says the operation is not supported, as every write on
// a DB opened with OpenReadOnly is ("Not implemented" in LevelDB's words).
func IsNotSupported(err error) bool { return hasKind(err, "Not implemented") }
