// Package strata is the Go binding of Strata, an embedded ordered key-value store that reads
// and writes LevelDB 1.23's on-disk format. It calls Strata's LevelDB-compatible C API
// (leveldb/c.h) through cgo, with the API Go users of LevelDB know from levigo: Open,
// DestroyDatabase, RepairDatabase, DB.Get/Put/Delete/Write with ReadOptions and WriteOptions,
// WriteBatch, Iterator, snapshots, GetApproximateSizes, PropertyValue, CompactRange, the bloom
// filter, the LRU cache, and Close on everything. Beyond levigo, through Strata's extensions
// (strata/c.h): OpenReadOnly and DB.Refresh read a database another process writes, and
// DB.Checkpoint copies a database at one point in time while it is written; DB.GetMany reads
// many keys at one moment, faster than a Get each; DB.ClearRange deletes a range key by key;
// DB.DeleteRange and DB.PutWithTTL (and their WriteBatch forms) delete a range in one write and
// write values that expire, extensions of LevelDB's format enabled by Options.SetRangeDeletes
// and Options.SetExpiringKeys (LevelDB then refuses the directory).
//
// # Building
//
// The package finds Strata's C library through pkg-config (`#cgo pkg-config: strata`), so once
// the library is installed with its strata.pc no CGO flags are needed:
//
//	make install-c PREFIX=/usr/local          # in Strata's repository
//	go get github.com/strata-db/strata/bindings/go@v0.1.0
//	go build                                  # PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig for another PREFIX
//
// A program linked this way needs libstrata.so.0 at run time: under /usr/local/lib run ldconfig
// once; elsewhere set LD_LIBRARY_PATH (or link with -Wl,-rpath through CGO_LDFLAGS).
// `make go-test` in the repository tests the package against such an installed copy.
//
// # Conventions
//
// Every object made by a New* function or Open holds C memory and must be released with its
// Close method (ReleaseSnapshot for snapshots); Close is safe to call twice. A DB may be used
// from many goroutines at once; an Iterator, a WriteBatch and the options objects may not.
// Errors returned by the database are of type DatabaseError (see IsCorruption,
// IsInvalidArgument, IsIOError, IsNotSupported). A missing key is not an error: Get returns a nil slice.
package strata
