package strata

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadOnlyBesideAWriter(t *testing.T) {
	writer, path, _ := openNew(t, func(o *Options) { o.SetWriteBufferSize(64 << 10) })
	for i := 0; i < 3000; i++ {
		mustPut(t, writer, fmt.Sprintf("key%05d", i), fmt.Sprintf("value%d", i))
	}
	// The writer holds the LOCK: a second writer is refused, a reader is not.
	if _, err := Open(path, nil); !IsIOError(err) {
		t.Fatalf("second writer: got %v", err)
	}
	reader, err := OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if !reader.IsReadOnly() || writer.IsReadOnly() {
		t.Fatal("IsReadOnly")
	}
	wantGet(t, reader, nil, "key00042", []byte("value42"))

	if err := reader.Put(nil, []byte("k"), []byte("v")); !IsNotSupported(err) {
		t.Fatalf("put on a read-only DB: got %v", err)
	}
	if err := reader.Delete(nil, []byte("key00042")); !IsNotSupported(err) {
		t.Fatalf("delete on a read-only DB: got %v", err)
	}
	batch := NewWriteBatch()
	defer batch.Close()
	batch.Put([]byte("k"), []byte("v"))
	if err := reader.Write(nil, batch); !IsNotSupported(err) {
		t.Fatalf("write on a read-only DB: got %v", err)
	}

	mustPut(t, writer, "later", "1")
	wantGet(t, reader, nil, "later", nil)
	if err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}
	wantGet(t, reader, nil, "later", []byte("1"))
	if err := writer.Refresh(); err != nil {
		t.Fatalf("refresh of a DB that writes: %v", err)
	}

	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "missing"), nil); !IsInvalidArgument(err) {
		t.Fatalf("missing database: got %v", err)
	}
}

func TestCheckpoints(t *testing.T) {
	writer, path, _ := openNew(t, func(o *Options) { o.SetWriteBufferSize(64 << 10) })
	for i := 0; i < 3000; i++ {
		mustPut(t, writer, fmt.Sprintf("key%05d", i), fmt.Sprintf("value%d", i))
	}
	reader, err := OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	dir := t.TempDir()
	fromWriter := filepath.Join(dir, "from-writer")
	if err := writer.Checkpoint(fromWriter); err != nil {
		t.Fatal(err)
	}
	mustPut(t, writer, "after", "the checkpoints")
	fromReader := filepath.Join(dir, "from-reader")
	if err := reader.Checkpoint(fromReader); err != nil {
		t.Fatal(err)
	}
	if err := writer.Checkpoint(fromWriter); !IsInvalidArgument(err) {
		t.Fatalf("checkpoint into an existing directory: got %v", err)
	}
	opts := NewOptions()
	defer opts.Close()
	opts.SetParanoidChecks(true)
	for _, copyPath := range []string{fromWriter, fromReader} {
		copy, err := Open(copyPath, opts)
		if err != nil {
			t.Fatal(err)
		}
		wantGet(t, copy, nil, "key02999", []byte("value2999"))
		wantGet(t, copy, nil, "after", nil)
		it := copy.NewIterator(nil)
		it.SeekToFirst()
		n := len(scan(it, it.Next))
		it.Close()
		copy.Close()
		if n != 3000 {
			t.Fatalf("%s holds %d keys", copyPath, n)
		}
	}
}

// A writer goroutine writes while reader goroutines refresh and read: each refreshed reader
// sees every write acknowledged before its refresh (run with -race by make go-test).
func TestReadersRefreshBesideAWritingGoroutine(t *testing.T) {
	writer, path, _ := openNew(t, func(o *Options) { o.SetWriteBufferSize(64 << 10) })
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := writer.Put(nil, []byte(fmt.Sprintf("key%07d", i)), []byte("v")); err != nil {
				t.Error(err)
				return
			}
			acked.Store(int64(i + 1))
		}
	}()
	errs := make(chan error, 3)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reader, err := OpenReadOnly(path, nil)
			if err != nil {
				errs <- err
				return
			}
			defer reader.Close()
			for round := 0; round < 50; round++ {
				before := acked.Load()
				if err := reader.Refresh(); err != nil {
					errs <- err
					return
				}
				if before > 0 {
					got, err := reader.Get(nil, []byte(fmt.Sprintf("key%07d", before-1)))
					if err != nil || got == nil {
						errs <- fmt.Errorf("write %d acknowledged before the refresh is missing (%v)", before-1, err)
						return
					}
				}
			}
		}()
	}
	for acked.Load() < 20000 && len(errs) == 0 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
