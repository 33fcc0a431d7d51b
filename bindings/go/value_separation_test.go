package strata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// valueOf is key i's value: i*7%5000 bytes, so inline and separated values mix.
func valueOf(i int) []byte { return bytes.Repeat([]byte{'v'}, i*7%5000) }

func wantHead(t *testing.T, db *DB, ro *ReadOptions, key string, length uint64, found bool) {
	t.Helper()
	gotLen, gotFound, err := db.Head(ro, []byte(key))
	if err != nil {
		t.Fatalf("Head %q: %v", key, err)
	}
	if gotLen != length || gotFound != found {
		t.Fatalf("Head %q: (%d, %v), want (%d, %v)", key, gotLen, gotFound, length, found)
	}
}

func TestHeadAnswersFromTheTreeAloneWithValueSeparation(t *testing.T) {
	db, path, opts := openNew(t, func(o *Options) { o.SetValueSeparation(1024) })
	for i := 0; i < 600; i++ {
		if err := db.Put(nil, []byte(fmt.Sprintf("key%05d", i)), valueOf(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 600; i++ {
		key := fmt.Sprintf("key%05d", i)
		wantGet(t, db, nil, key, valueOf(i))
		wantHead(t, db, nil, key, uint64(len(valueOf(i))), true)
	}
	wantHead(t, db, nil, "absent", 0, false)

	// At a snapshot: the length of the value the snapshot reads.
	snap := db.NewSnapshot()
	ro := NewReadOptions()
	defer ro.Close()
	ro.SetSnapshot(snap)
	mustPut(t, db, "key00001", strings.Repeat("w", 4321))
	if err := db.Delete(nil, []byte("key00002")); err != nil {
		t.Fatal(err)
	}
	wantHead(t, db, nil, "key00001", 4321, true)
	wantHead(t, db, ro, "key00001", 7, true)
	wantHead(t, db, nil, "key00002", 0, false)
	wantHead(t, db, ro, "key00002", 14, true)
	db.ReleaseSnapshot(snap)

	// Every value file deleted: Head still answers, Get reports the damage.
	db.CompactRange(Range{})
	db.Close()
	files, err := filepath.Glob(filepath.Join(path, "*.vlog"))
	if err != nil || len(files) == 0 {
		t.Fatalf("value files: %v %v", files, err)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	reopened, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	for i := 3; i < 600; i++ {
		wantHead(t, reopened, nil, fmt.Sprintf("key%05d", i), uint64(len(valueOf(i))), true)
	}
	if _, err := reopened.Get(nil, []byte("key00499")); err == nil || !strings.Contains(err.Error(), "Corruption") {
		t.Fatalf("Get of a value whose file is gone: %v", err)
	}

	// A key iterator walks keys and value lengths without the value files.
	keys := reopened.NewKeyIterator(nil)
	defer keys.Close()
	seen := 0
	for keys.Seek([]byte("key00003")); keys.Valid(); keys.Next() {
		i := 3 + seen
		if got, want := string(keys.Key()), fmt.Sprintf("key%05d", i); got != want {
			t.Fatalf("key %q, want %q", got, want)
		}
		if len(keys.Value()) != 0 || keys.ValueLength() != uint64(len(valueOf(i))) {
			t.Fatalf("key %d: value %d bytes, length %d", i, len(keys.Value()), keys.ValueLength())
		}
		seen++
	}
	if err := keys.GetError(); err != nil || seen != 597 {
		t.Fatalf("%d keys, error %v", seen, err)
	}
}

func TestAnOpenWithoutValueSeparationIsRefused(t *testing.T) {
	db, path, _ := openNew(t, func(o *Options) { o.SetValueSeparation(1024) })
	mustPut(t, db, "big", strings.Repeat("x", 2000))
	db.Close()
	plain := NewOptions()
	defer plain.Close()
	if again, err := Open(path, plain); err == nil || !strings.Contains(err.Error(), "value files") {
		if again != nil {
			again.Close()
		}
		t.Fatalf("open without the option: %v", err)
	}
}
