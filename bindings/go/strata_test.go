package strata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// openNew opens a fresh database in a temporary directory; it is closed at the end of the test.
func openNew(t *testing.T, configure func(*Options)) (*DB, string, *Options) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	opts := NewOptions()
	opts.SetCreateIfMissing(true)
	if configure != nil {
		configure(opts)
	}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		db.Close()
		opts.Close()
	})
	return db, path, opts
}

func mustPut(t *testing.T, db *DB, key, value string) {
	t.Helper()
	if err := db.Put(nil, []byte(key), []byte(value)); err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
}

// wantGet checks that key reads back as want, or is missing when want is nil.
func wantGet(t *testing.T, db *DB, ro *ReadOptions, key string, want []byte) {
	t.Helper()
	got, err := db.Get(ro, []byte(key))
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	if want == nil && got != nil {
		t.Fatalf("get %q: want missing, got %q", key, got)
	}
	if want != nil && (got == nil || !bytes.Equal(got, want)) {
		t.Fatalf("get %q: want %q, got %q", key, want, got)
	}
}

// scan returns "k=v" items from the iterator's current position onwards, moving with step.
func scan(it *Iterator, step func()) []string {
	var out []string
	for ; it.Valid(); step() {
		out = append(out, fmt.Sprintf("%s=%s", it.Key(), it.Value()))
	}
	return out
}

func TestOpenErrorsAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	_, err := Open(path, nil)
	if !IsInvalidArgument(err) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing database: got %v", err)
	}
	opts := NewOptions()
	defer opts.Close()
	opts.SetCreateIfMissing(true)
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The LOCK keeps a second open out, in this process too.
	if _, err := Open(path, opts); !IsIOError(err) {
		t.Fatalf("second open: got %v", err)
	}
	if err := DestroyDatabase(path, opts); !IsIOError(err) {
		t.Fatalf("destroy while open: got %v", err)
	}
	db.Close()
	db.Close() // twice is harmless
	// A closed DB reports errors instead of crashing.
	if err := db.Put(nil, []byte("k"), []byte("v")); !IsInvalidArgument(err) {
		t.Fatalf("put after close: got %v", err)
	}
	if _, err := db.Get(nil, []byte("k")); !IsInvalidArgument(err) {
		t.Fatalf("get after close: got %v", err)
	}

	opts.SetErrorIfExists(true)
	if _, err := Open(path, opts); !IsInvalidArgument(err) || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("error if exists: got %v", err)
	}
	_, err = Open(path, opts)
	var dbErr DatabaseError
	if !errors.As(err, &dbErr) || !strings.HasPrefix(dbErr.Error(), "Invalid argument: ") || IsCorruption(err) {
		t.Fatalf("error type: got %T %v", err, err)
	}
}

func TestPutGetDelete(t *testing.T) {
	db, path, opts := openNew(t, nil)
	wo := NewWriteOptions()
	defer wo.Close()
	ro := NewReadOptions()
	defer ro.Close()

	wantGet(t, db, ro, "foo", nil)
	if err := db.Put(wo, []byte("foo"), []byte("bar")); err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, ro, "foo", []byte("bar"))
	mustPut(t, db, "foo", "baz")
	wantGet(t, db, nil, "foo", []byte("baz"))

	// Byte strings: NULs, an empty key, an empty value (present, not nil).
	bin := []byte{'a', 0, 'b', 0xff}
	if err := db.Put(wo, bin, []byte{0, 1}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Get(ro, bin); !bytes.Equal(got, []byte{0, 1}) {
		t.Fatalf("binary key: got %v", got)
	}
	if err := db.Put(wo, nil, []byte("empty key")); err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, ro, "", []byte("empty key"))
	mustPut(t, db, "empty", "")
	if got, err := db.Get(ro, []byte("empty")); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty value: got %v, %v", got, err)
	}

	wo.SetSync(true)
	if err := db.Delete(wo, []byte("foo")); err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, ro, "foo", nil)
	if err := db.Delete(nil, []byte("never-there")); err != nil {
		t.Fatal(err)
	}

	// Survives a reopen.
	db.Close()
	db2, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	wantGet(t, db2, ro, "", []byte("empty key"))
	wantGet(t, db2, ro, "foo", nil)
}

// recorder implements BatchHandler.
type recorder struct{ ops []string }

func (r *recorder) Put(k, v []byte) { r.ops = append(r.ops, fmt.Sprintf("put(%s,%s)", k, v)) }
func (r *recorder) Delete(k []byte) { r.ops = append(r.ops, fmt.Sprintf("del(%s)", k)) }

func TestWriteBatch(t *testing.T) {
	db, _, _ := openNew(t, nil)
	mustPut(t, db, "gone", "soon")

	b := NewWriteBatch()
	defer b.Close()
	b.Put([]byte("a"), []byte("1"))
	b.Clear()
	b.Put([]byte("b"), []byte("2"))
	b.Delete([]byte("gone"))
	b.Put([]byte("b"), []byte("22"))
	other := NewWriteBatch()
	defer other.Close()
	other.Put([]byte("c"), []byte("3"))
	b.Append(other)

	var r recorder
	b.Iterate(&r)
	want := "put(b,2) del(gone) put(b,22) put(c,3)"
	if got := strings.Join(r.ops, " "); got != want {
		t.Fatalf("iterate: got %s, want %s", got, want)
	}
	if err := db.Write(nil, b); err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, nil, "a", nil)
	wantGet(t, db, nil, "b", []byte("22"))
	wantGet(t, db, nil, "c", []byte("3"))
	wantGet(t, db, nil, "gone", nil)

	// The batch is unchanged by the write; an empty batch writes nothing.
	r = recorder{}
	b.Iterate(&r)
	if len(r.ops) != 4 {
		t.Fatalf("batch changed by write: %v", r.ops)
	}
	b.Clear()
	if err := db.Write(nil, b); err != nil {
		t.Fatal(err)
	}
	r = recorder{}
	b.Iterate(&r)
	if len(r.ops) != 0 {
		t.Fatalf("cleared batch: %v", r.ops)
	}
}

func TestIteratorEdgeCases(t *testing.T) {
	db, _, _ := openNew(t, nil)

	// Empty database.
	it := db.NewIterator(nil)
	if it.Valid() || it.Key() != nil || it.Value() != nil {
		t.Fatal("unpositioned iterator is valid")
	}
	it.SeekToFirst()
	if it.Valid() {
		t.Fatal("empty: SeekToFirst valid")
	}
	it.SeekToLast()
	if it.Valid() {
		t.Fatal("empty: SeekToLast valid")
	}
	it.Seek([]byte("x"))
	it.Next()
	it.Prev()
	if it.Valid() || it.GetError() != nil {
		t.Fatal("empty: seek valid or error")
	}
	it.Close()
	it.Close() // twice is harmless

	for _, k := range []string{"b", "d", "f"} {
		mustPut(t, db, k, strings.ToUpper(k))
	}
	it = db.NewIterator(nil)
	defer it.Close()
	mustPut(t, db, "a", "A") // after creation: invisible
	if err := db.Delete(nil, []byte("d")); err != nil {
		t.Fatal(err)
	}

	it.SeekToFirst()
	if got := strings.Join(scan(it, it.Next), " "); got != "b=B d=D f=F" {
		t.Fatalf("forward: %s", got)
	}
	it.SeekToLast()
	if got := strings.Join(scan(it, it.Prev), " "); got != "f=F d=D b=B" {
		t.Fatalf("backward: %s", got)
	}
	cases := []struct{ seek, want string }{
		{"", "b"}, {"a", "b"}, {"b", "b"}, {"c", "d"}, {"f", "f"}, {"g", ""},
	}
	for _, c := range cases {
		it.Seek([]byte(c.seek))
		got := ""
		if it.Valid() {
			got = string(it.Key())
		}
		if got != c.want {
			t.Fatalf("seek %q: got %q, want %q", c.seek, got, c.want)
		}
	}
	// Direction changes and the ends.
	it.Seek([]byte("d"))
	it.Next()
	it.Prev()
	it.Prev()
	if string(it.Key()) != "b" {
		t.Fatalf("direction change: at %q", it.Key())
	}
	it.Prev()
	if it.Valid() {
		t.Fatal("prev from first is valid")
	}
	it.SeekToLast()
	it.Next()
	if it.Valid() {
		t.Fatal("next from last is valid")
	}
	// Keys are copies.
	it.SeekToFirst()
	k := it.Key()
	k[0] = 'z'
	if string(it.Key()) != "b" {
		t.Fatal("Key returned the iterator's memory")
	}
	if err := it.GetError(); err != nil {
		t.Fatal(err)
	}

	// A new iterator sees the later writes.
	it2 := db.NewIterator(nil)
	defer it2.Close()
	it2.SeekToFirst()
	if got := strings.Join(scan(it2, it2.Next), " "); got != "a=A b=B f=F" {
		t.Fatalf("new iterator: %s", got)
	}
}

func TestSnapshots(t *testing.T) {
	db, _, _ := openNew(t, nil)
	mustPut(t, db, "k", "v1")
	mustPut(t, db, "gone", "x")
	snap := db.NewSnapshot()
	mustPut(t, db, "k", "v2")
	if err := db.Delete(nil, []byte("gone")); err != nil {
		t.Fatal(err)
	}
	db.CompactRange(Range{}) // must keep what the snapshot sees

	ro := NewReadOptions()
	defer ro.Close()
	ro.SetSnapshot(snap)
	ro.SetVerifyChecksums(true)
	ro.SetFillCache(false)
	wantGet(t, db, ro, "k", []byte("v1"))
	wantGet(t, db, ro, "gone", []byte("x"))
	it := db.NewIterator(ro)
	it.SeekToFirst()
	if got := strings.Join(scan(it, it.Next), " "); got != "gone=x k=v1" {
		t.Fatalf("snapshot scan: %s", got)
	}
	it.Close()
	ro.SetSnapshot(nil)
	wantGet(t, db, ro, "k", []byte("v2"))
	wantGet(t, db, ro, "gone", nil)
	db.ReleaseSnapshot(snap)
	db.ReleaseSnapshot(snap) // twice is harmless
}

func TestPropertiesSizesAndCompaction(t *testing.T) {
	db, _, _ := openNew(t, func(o *Options) { o.SetCompression(NoCompression) })
	if v := db.PropertyValue("leveldb.no-such-thing"); v != "" {
		t.Fatalf("unknown property: %q", v)
	}
	if v := db.PropertyValue("leveldb.stats"); !strings.Contains(v, "Level") {
		t.Fatalf("stats: %q", v)
	}
	if v := db.PropertyValue("leveldb.approximate-memory-usage"); v == "" {
		t.Fatal("memory usage missing")
	}
	value := bytes.Repeat([]byte("v"), 100)
	b := NewWriteBatch()
	defer b.Close()
	for i := 0; i < 10000; i++ {
		b.Put([]byte(fmt.Sprintf("key%06d", i)), value)
	}
	if err := db.Write(nil, b); err != nil {
		t.Fatal(err)
	}
	db.CompactRange(Range{})
	files := 0
	for level := 0; level < 7; level++ {
		var n int
		fmt.Sscan(db.PropertyValue(fmt.Sprintf("leveldb.num-files-at-level%d", level)), &n)
		files += n
	}
	if files == 0 || db.PropertyValue("leveldb.sstables") == "" {
		t.Fatal("no tables after compaction")
	}
	sizes := db.GetApproximateSizes([]Range{
		{Start: []byte("a"), Limit: []byte("k")},
		{Start: []byte("key000000"), Limit: []byte("key005000")},
		{Start: []byte("key005000"), Limit: []byte("key010000")},
	})
	if sizes[0] != 0 || sizes[1] < 300000 || sizes[1] > 1000000 || sizes[2] < 300000 {
		t.Fatalf("sizes: %v", sizes)
	}
	if got := db.GetApproximateSizes(nil); len(got) != 0 {
		t.Fatalf("no ranges: %v", got)
	}
	// A bounded compaction drops the deleted half.
	b.Clear()
	for i := 0; i < 5000; i++ {
		b.Delete([]byte(fmt.Sprintf("key%06d", i)))
	}
	if err := db.Write(nil, b); err != nil {
		t.Fatal(err)
	}
	db.CompactRange(Range{Start: []byte("key000000"), Limit: []byte("key004999")})
	sizes = db.GetApproximateSizes([]Range{{Start: []byte("key000000"), Limit: []byte("key005000")}})
	if sizes[0] > 100000 {
		t.Fatalf("deleted range still holds %d bytes", sizes[0])
	}
	wantGet(t, db, nil, "key004999", nil)
	wantGet(t, db, nil, "key005000", value)
}

func TestDestroyAndRepair(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	opts := NewOptions()
	defer opts.Close()
	opts.SetCreateIfMissing(true)
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "keep", "me")
	db.CompactRange(Range{})
	mustPut(t, db, "in", "log")
	db.Close()

	if err := os.Remove(filepath.Join(path, "CURRENT")); err != nil {
		t.Fatal(err)
	}
	if err := RepairDatabase(path, opts); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, nil, "keep", []byte("me"))
	wantGet(t, db, nil, "in", []byte("log"))
	db.Close()

	if err := DestroyDatabase(path, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(path, "CURRENT")); !os.IsNotExist(err) {
		t.Fatalf("CURRENT survived destroy: %v", err)
	}
	if _, err := Open(path, nil); !IsInvalidArgument(err) {
		t.Fatalf("open after destroy: %v", err)
	}
}

func TestEveryOptionAndResource(t *testing.T) {
	if GetLevelDBMajorVersion() != 1 || GetLevelDBMinorVersion() != 23 {
		t.Fatal("version")
	}
	env := NewDefaultEnv()
	dir := env.TestDirectory()
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("test directory %q: %v", dir, err)
	}
	cache := NewLRUCache(1 << 20)
	bloom := NewBloomFilter(10)
	db, path, opts := openNew(t, func(o *Options) {
		o.SetComparator(nil)
		o.SetFilterPolicy(bloom)
		o.SetErrorIfExists(true)
		o.SetParanoidChecks(true)
		o.SetEnv(env)
		o.SetInfoLog(nil)
		o.SetWriteBufferSize(100000)
		o.SetMaxOpenFiles(100)
		o.SetCache(cache)
		o.SetBlockSize(1024)
		o.SetBlockRestartInterval(8)
		o.SetMaxFileSize(1 << 20)
		o.SetCompression(SnappyCompression)
	})
	// The database keeps what it uses alive.
	env.Close()
	cache.Close()
	bloom.Close()
	value := bytes.Repeat([]byte("x"), 100)
	for i := 0; i < 3000; i++ {
		if err := db.Put(nil, []byte(fmt.Sprintf("k%05d", i)), value); err != nil {
			t.Fatal(err)
		}
	}
	wantGet(t, db, nil, "k02999", value)
	wantGet(t, db, nil, "k99999", nil)
	db.Close()
	opts.SetErrorIfExists(false)
	opts.SetFilterPolicy(nil)
	opts.SetCache(nil)
	opts.SetEnv(nil)
	db2, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	wantGet(t, db2, nil, "k00000", value)
}

func reverse(a, b []byte) int { return -bytes.Compare(a, b) }

func TestGoComparator(t *testing.T) {
	cmp := NewComparator("strata-go-test.Reverse", reverse)
	db, path, opts := openNew(t, func(o *Options) { o.SetComparator(cmp) })
	cmp.Close() // the options and the database keep it
	for _, k := range []string{"apple", "banana", "cherry"} {
		mustPut(t, db, k, k[:1])
	}
	db.CompactRange(Range{}) // the background thread calls the Go function
	mustPut(t, db, "date", "d")
	it := db.NewIterator(nil)
	it.SeekToFirst()
	if got := strings.Join(scan(it, it.Next), " "); got != "date=d cherry=c banana=b apple=a" {
		t.Fatalf("reverse order: %s", got)
	}
	it.Seek([]byte("c"))
	if string(it.Key()) != "banana" {
		t.Fatalf("seek in reverse order: %q", it.Key())
	}
	it.Close()
	db.Close()

	opts.SetComparator(nil)
	if _, err := Open(path, opts); !IsInvalidArgument(err) || !strings.Contains(err.Error(), "strata-go-test.Reverse") {
		t.Fatalf("open with another comparator: %v", err)
	}
}

func TestGoFilterPolicy(t *testing.T) {
	var created, probed, sayNo atomic.Int32
	// The filter is the keys joined by NUL: exact, for testing.
	policy := NewFilterPolicy("strata-go-test.List",
		func(keys [][]byte) []byte {
			created.Add(1)
			return bytes.Join(keys, []byte{0})
		},
		func(key, filter []byte) bool {
			probed.Add(1)
			if sayNo.Load() != 0 {
				return false
			}
			for _, k := range bytes.Split(filter, []byte{0}) {
				if bytes.Equal(k, key) {
					return true
				}
			}
			return false
		})
	defer policy.Close()
	db, _, _ := openNew(t, func(o *Options) { o.SetFilterPolicy(policy) })
	mustPut(t, db, "foo", "1")
	mustPut(t, db, "bar", "2")
	db.CompactRange(Range{})
	if created.Load() == 0 {
		t.Fatal("create_filter never called")
	}
	wantGet(t, db, nil, "foo", []byte("1"))
	wantGet(t, db, nil, "baz", nil)
	if probed.Load() == 0 {
		t.Fatal("key_may_match never called")
	}
	sayNo.Store(1) // the filter is trusted: the table is not read
	wantGet(t, db, nil, "foo", nil)
	sayNo.Store(0)
	wantGet(t, db, nil, "foo", []byte("1"))
}

func TestConcurrentGoroutines(t *testing.T) {
	db, _, _ := openNew(t, func(o *Options) { o.SetWriteBufferSize(64 << 10) })
	const writers, perWriter = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				key := []byte(fmt.Sprintf("w%d-%04d", w, i))
				val := []byte(fmt.Sprintf("value-%d-%d", w, i))
				if i%10 == 0 {
					b := NewWriteBatch()
					b.Put(key, val)
					err := db.Write(nil, b)
					b.Close()
					if err != nil {
						errs <- err
						return
					}
				} else if err := db.Put(nil, key, val); err != nil {
					errs <- err
					return
				}
				got, err := db.Get(nil, key)
				if err != nil || !bytes.Equal(got, val) {
					errs <- fmt.Errorf("read own write %s: %q, %v", key, got, err)
					return
				}
			}
		}(w)
	}
	for s := 0; s < 2; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 10; round++ {
				it := db.NewIterator(nil)
				var prev []byte
				for it.SeekToFirst(); it.Valid(); it.Next() {
					k := it.Key()
					if prev != nil && bytes.Compare(prev, k) >= 0 {
						errs <- fmt.Errorf("scan out of order: %q then %q", prev, k)
					}
					prev = k
				}
				if err := it.GetError(); err != nil {
					errs <- err
				}
				it.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	it := db.NewIterator(nil)
	defer it.Close()
	n := 0
	for it.SeekToFirst(); it.Valid(); it.Next() {
		n++
	}
	if n != writers*perWriter {
		t.Fatalf("found %d keys, want %d", n, writers*perWriter)
	}
}

// The README's Go example must be the Example function run above, word for word.
func TestReadmeGoExampleIsTheTestedExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, part := range strings.Split(string(readme), "```go\n")[1:] {
		block, _, found := strings.Cut(part, "```")
		if !found {
			t.Fatal("unterminated go block in README")
		}
		blocks++
		if !strings.Contains(string(source), block) {
			t.Fatalf("README's Go block is not part of example_test.go:\n%s", block)
		}
	}
	if blocks == 0 {
		t.Fatal("README has no Go example")
	}
}
