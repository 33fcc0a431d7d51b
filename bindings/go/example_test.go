package strata_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	strata "github.com/strata-db/strata/bindings/go"
)

// The Go example shown in the README: open, write, read, scan, close, destroy.
func Example() {
	dir, err := os.MkdirTemp("", "strata-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "db")

	opts := strata.NewOptions()
	defer opts.Close()
	opts.SetCreateIfMissing(true)
	db, err := strata.Open(path, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	wo := strata.NewWriteOptions()
	defer wo.Close()
	ro := strata.NewReadOptions()
	defer ro.Close()

	if err := db.Put(wo, []byte("apple"), []byte("red")); err != nil {
		log.Fatal(err)
	}
	batch := strata.NewWriteBatch()
	defer batch.Close()
	batch.Put([]byte("banana"), []byte("yellow"))
	batch.Put([]byte("cherry"), []byte("dark red"))
	batch.Delete([]byte("apple"))
	if err := db.Write(wo, batch); err != nil {
		log.Fatal(err)
	}

	value, err := db.Get(ro, []byte("banana"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("banana = %s\n", value)
	missing, _ := db.Get(ro, []byte("apple"))
	fmt.Println("apple missing:", missing == nil)

	it := db.NewIterator(ro)
	defer it.Close()
	for it.SeekToFirst(); it.Valid(); it.Next() {
		fmt.Printf("%s -> %s\n", it.Key(), it.Value())
	}
	if err := it.GetError(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// banana = yellow
	// apple missing: true
	// banana -> yellow
	// cherry -> dark red
}

// Reads through a snapshot see the database as it was when the snapshot was taken.
func ExampleDB_NewSnapshot() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	opts := strata.NewOptions()
	defer opts.Close()
	opts.SetCreateIfMissing(true)
	db, err := strata.Open(filepath.Join(dir, "db"), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	_ = db.Put(nil, []byte("k"), []byte("old"))
	snap := db.NewSnapshot()
	defer db.ReleaseSnapshot(snap)
	_ = db.Put(nil, []byte("k"), []byte("new"))

	ro := strata.NewReadOptions()
	defer ro.Close()
	ro.SetSnapshot(snap)
	then, _ := db.Get(ro, []byte("k"))
	now, _ := db.Get(nil, []byte("k"))
	fmt.Printf("snapshot: %s, now: %s\n", then, now)
	// Output: snapshot: old, now: new
}

// A bloom filter and a shared LRU cache, set up as with LevelDB.
func ExampleNewBloomFilter() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	filter := strata.NewBloomFilter(10)
	defer filter.Close()
	cache := strata.NewLRUCache(8 << 20)
	defer cache.Close()

	opts := strata.NewOptions()
	defer opts.Close()
	opts.SetCreateIfMissing(true)
	opts.SetFilterPolicy(filter)
	opts.SetCache(cache)
	db, err := strata.Open(filepath.Join(dir, "db"), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	_ = db.Put(nil, []byte("present"), []byte("yes"))
	db.CompactRange(strata.Range{}) // everything into tables, which carry filters
	v, _ := db.Get(nil, []byte("present"))
	absent, _ := db.Get(nil, []byte("absent"))
	fmt.Println(string(v), absent == nil)
	// Output: yes true
}

// Opening a database that does not exist, without SetCreateIfMissing, is an error.
func ExampleOpen_missing() {
	_, err := strata.Open(filepath.Join(os.TempDir(), "strata-no-such-db"), nil)
	fmt.Println(strata.IsInvalidArgument(err))
	// Output: true
}
