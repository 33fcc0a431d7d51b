package strata

/*
#include <leveldb/c.h>
*/
import "C"

// CompressionOpt selects how table blocks are compressed.
type CompressionOpt int

// Compression choices, with LevelDB's values.
const (
	NoCompression     = CompressionOpt(0)
	SnappyCompression = CompressionOpt(1)
)

// boolByte is C's uint8_t boolean.
func boolByte(b bool) C.uint8_t {
	if b {
		return 1
	}
	return 0
}

// Options says how a database is opened. A nil *Options means the defaults (bytewise order,
// no creation, 4 MiB write buffer, 1000 open files, 4 KiB blocks, Snappy). The comparator,
// filter policy, cache and env set here are shared: closing them early is safe.
type Options struct {
	opt *C.leveldb_options_t
}

// NewOptions returns options with LevelDB's defaults. Close them when done.
func NewOptions() *Options { return &Options{opt: C.leveldb_options_create()} }

func (o *Options) ptr() *C.leveldb_options_t {
	if o == nil {
		return nil
	}
	return o.opt
}

// Close frees the options; databases opened with them are not affected.
func (o *Options) Close() {
	if o.opt != nil {
		C.leveldb_options_destroy(o.opt)
		o.opt = nil
	}
}

// SetComparator sets the key order (nil: bytewise). Its name is stored in the database and
// must match at every later open.
func (o *Options) SetComparator(c *Comparator) { C.leveldb_options_set_comparator(o.opt, c.ptr()) }

// SetFilterPolicy sets the per-table filter used to skip tables without a key (nil: none).
func (o *Options) SetFilterPolicy(p *FilterPolicy) {
	C.leveldb_options_set_filter_policy(o.opt, p.ptr())
}

// SetCreateIfMissing makes Open create a missing database.
func (o *Options) SetCreateIfMissing(b bool) {
	C.leveldb_options_set_create_if_missing(o.opt, boolByte(b))
}

// SetErrorIfExists makes Open fail when the database already exists.
func (o *Options) SetErrorIfExists(b bool) {
	C.leveldb_options_set_error_if_exists(o.opt, boolByte(b))
}

// SetParanoidChecks makes the database fail on any corruption it meets.
func (o *Options) SetParanoidChecks(b bool) {
	C.leveldb_options_set_paranoid_checks(o.opt, boolByte(b))
}

// SetEnv sets the environment (nil: the default POSIX one).
func (o *Options) SetEnv(e *Env) { C.leveldb_options_set_env(o.opt, e.ptr()) }

// SetInfoLog is accepted for compatibility and ignored: the database always writes its info
// log to the LOG file in its directory.
func (o *Options) SetInfoLog(_ interface{}) { C.leveldb_options_set_info_log(o.opt, nil) }

// SetWriteBufferSize sets the bytes gathered in memory before a table is written (clipped to
// 64 KiB..1 GiB).
func (o *Options) SetWriteBufferSize(n int) {
	C.leveldb_options_set_write_buffer_size(o.opt, C.size_t(clampSize(n)))
}

// SetMaxOpenFiles sets how many table files are kept open (clipped to 74..50000).
func (o *Options) SetMaxOpenFiles(n int) {
	C.leveldb_options_set_max_open_files(o.opt, C.int(clampInt(n)))
}

// SetCache sets the block cache (nil: an 8 MiB cache of the database's own).
func (o *Options) SetCache(c *Cache) { C.leveldb_options_set_cache(o.opt, c.ptr()) }

// SetBlockSize sets the uncompressed size of a table block (clipped to 1 KiB..4 MiB).
func (o *Options) SetBlockSize(n int) {
	C.leveldb_options_set_block_size(o.opt, C.size_t(clampSize(n)))
}

// SetBlockRestartInterval sets the number of keys between restart points in a block.
func (o *Options) SetBlockRestartInterval(n int) {
	C.leveldb_options_set_block_restart_interval(o.opt, C.int(clampInt(n)))
}

// SetMaxFileSize sets the bytes written to a table before the next is started (clipped to
// 1 MiB..1 GiB).
func (o *Options) SetMaxFileSize(n int) {
	C.leveldb_options_set_max_file_size(o.opt, C.size_t(clampSize(n)))
}

// SetCompression sets the block compression.
func (o *Options) SetCompression(c CompressionOpt) {
	C.leveldb_options_set_compression(o.opt, C.int(c))
}

// clampSize maps a negative size to 0 (the library then clips it to its minimum).
func clampSize(n int) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}

// clampInt fits n into a C int.
func clampInt(n int) int32 {
	const maxInt32, minInt32 = 1<<31 - 1, -1 << 31
	switch {
	case n > maxInt32:
		return maxInt32
	case n < minInt32:
		return minInt32
	}
	return int32(n)
}

// ReadOptions are options for reads and iterators. A nil *ReadOptions means the defaults.
type ReadOptions struct {
	opt *C.leveldb_readoptions_t
}

// NewReadOptions returns the default read options. Close them when done.
func NewReadOptions() *ReadOptions { return &ReadOptions{opt: C.leveldb_readoptions_create()} }

func (ro *ReadOptions) ptr() *C.leveldb_readoptions_t {
	if ro == nil {
		return nil
	}
	return ro.opt
}

// Close frees the read options.
func (ro *ReadOptions) Close() {
	if ro.opt != nil {
		C.leveldb_readoptions_destroy(ro.opt)
		ro.opt = nil
	}
}

// SetVerifyChecksums makes reads check the checksum of every block they read.
func (ro *ReadOptions) SetVerifyChecksums(b bool) {
	C.leveldb_readoptions_set_verify_checksums(ro.opt, boolByte(b))
}

// SetFillCache sets whether blocks read are kept in the cache (turn off for bulk scans).
func (ro *ReadOptions) SetFillCache(b bool) {
	C.leveldb_readoptions_set_fill_cache(ro.opt, boolByte(b))
}

// SetSnapshot makes reads see the snapshot (nil: the latest state).
func (ro *ReadOptions) SetSnapshot(s *Snapshot) {
	var snap *C.leveldb_snapshot_t
	if s != nil {
		snap = s.snap
	}
	C.leveldb_readoptions_set_snapshot(ro.opt, snap)
}

// WriteOptions are options for writes. A nil *WriteOptions means the defaults.
type WriteOptions struct {
	opt *C.leveldb_writeoptions_t
}

// NewWriteOptions returns the default write options. Close them when done.
func NewWriteOptions() *WriteOptions {
	return &WriteOptions{opt: C.leveldb_writeoptions_create()}
}

func (wo *WriteOptions) ptr() *C.leveldb_writeoptions_t {
	if wo == nil {
		return nil
	}
	return wo.opt
}

// Close frees the write options.
func (wo *WriteOptions) Close() {
	if wo.opt != nil {
		C.leveldb_writeoptions_destroy(wo.opt)
		wo.opt = nil
	}
}

// SetSync makes each write wait until the log reaches stable storage.
func (wo *WriteOptions) SetSync(b bool) { C.leveldb_writeoptions_set_sync(wo.opt, boolByte(b)) }
