package strata

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// wantMany checks GetMany of keys against a Get of each.
func wantMany(t *testing.T, db *DB, ro *ReadOptions, keys ...string) {
	t.Helper()
	raw := make([][]byte, len(keys))
	for i, k := range keys {
		raw[i] = []byte(k)
	}
	got, err := db.GetMany(ro, raw)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	if len(got) != len(keys) {
		t.Fatalf("GetMany: %d values for %d keys", len(got), len(keys))
	}
	for i, k := range keys {
		single, err := db.Get(ro, raw[i])
		if err != nil {
			t.Fatal(err)
		}
		if (single == nil) != (got[i] == nil) || !bytes.Equal(single, got[i]) {
			t.Fatalf("GetMany %q: got %q, Get says %q", k, got[i], single)
		}
	}
}

func TestGetManyAnswersWhatGetAnswers(t *testing.T) {
	db, _, _ := openNew(t, func(o *Options) { o.SetWriteBufferSize(64 << 10) })
	for i := 0; i < 2000; i++ {
		mustPut(t, db, fmt.Sprintf("key%05d", i), fmt.Sprintf("value%d", i))
	}
	db.CompactRange(Range{})
	mustPut(t, db, "key00005", "newer")
	snap := db.NewSnapshot()
	defer db.ReleaseSnapshot(snap)
	ro := NewReadOptions()
	defer ro.Close()
	ro.SetSnapshot(snap)
	if err := db.Delete(nil, []byte("key00007")); err != nil {
		t.Fatal(err)
	}
	keys := []string{"key01999", "absent", "key00005", "key00007", "key01999", "", "key00000"}
	wantMany(t, db, nil, keys...)
	wantMany(t, db, ro, keys...)
	wantGet(t, db, ro, "key00007", []byte("value7"))
	wantGet(t, db, nil, "key00007", nil)
	if got, err := db.GetMany(nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("GetMany of no keys: %v %v", got, err)
	}
}

func TestRangeDeletesAndTTLNeedTheirOptions(t *testing.T) {
	db, path, opts := openNew(t, nil)
	for i := 0; i < 500; i++ {
		mustPut(t, db, fmt.Sprintf("key%05d", i), "v")
	}
	if err := db.DeleteRange(nil, []byte("key00000"), []byte("key00010")); !IsNotSupported(err) {
		t.Fatalf("DeleteRange without the option: %v", err)
	}
	if err := db.PutWithTTL(nil, []byte("k"), []byte("v"), time.Hour); !IsNotSupported(err) ||
		!strings.Contains(err.Error(), "expiring_keys") {
		t.Fatalf("PutWithTTL without the option: %v", err)
	}
	n, err := db.ClearRange(nil, []byte("key00100"), []byte("key00200"))
	if err != nil || n != 100 {
		t.Fatalf("ClearRange: %d %v", n, err)
	}
	wantGet(t, db, nil, "key00150", nil)
	wantGet(t, db, nil, "key00200", []byte("v"))
	db.Close()

	opts.SetRangeDeletes(true)
	opts.SetExpiringKeys(true)
	db, err = Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.DeleteRange(nil, []byte("key00000"), []byte("key00010")); err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, nil, "key00009", nil)
	wantGet(t, db, nil, "key00010", []byte("v"))
	if err := db.PutWithTTL(nil, []byte("lasting"), []byte("l"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.PutWithTTL(nil, []byte("soon"), []byte("s"), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := db.PutWithTTL(nil, []byte("expired"), []byte("e"), -time.Second); err != nil {
		t.Fatal(err)
	}
	wantMany(t, db, nil, "lasting", "soon", "expired", "key00005")
	wantGet(t, db, nil, "soon", []byte("s"))
	wantGet(t, db, nil, "expired", nil)

	batch := NewWriteBatch()
	defer batch.Close()
	batch.DeleteRange([]byte("key00300"), []byte("key00400"))
	batch.PutWithTTL([]byte("batched"), []byte("b"), time.Hour)
	batch.Put([]byte("key00350"), []byte("back"))
	if err := db.Write(nil, batch); err != nil {
		t.Fatal(err)
	}
	wantGet(t, db, nil, "key00349", nil)
	wantGet(t, db, nil, "key00350", []byte("back"))
	wantGet(t, db, nil, "batched", []byte("b"))
	time.Sleep(300 * time.Millisecond)
	wantGet(t, db, nil, "soon", nil)
	wantMany(t, db, nil, "soon", "lasting", "key00349", "key00350")
}

func TestAnExtensionDatabaseNeedsItsOption(t *testing.T) {
	db, path, opts := openNew(t, func(o *Options) { o.SetRangeDeletes(true) })
	if err := db.DeleteRange(nil, []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	opts.SetRangeDeletes(false)
	if _, err := Open(path, opts); !IsInvalidArgument(err) ||
		!strings.Contains(err.Error(), "range_deletes") {
		t.Fatalf("open without the option: %v", err)
	}
}
