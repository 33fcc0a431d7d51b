package io.github.stratakv;

import java.io.File;
import java.lang.ref.Reference;
import java.util.Objects;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Range;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;

/**
 * An open Strata database.
 *
 * <p>Thread-safe: share one instance between threads. Concurrent writes are grouped into one log
 * write; reads never wait for writes. {@link #close()} waits for calls in flight, then closes the
 * database and every iterator made from it; any later call throws a {@link DBException}. A
 * database never closed is closed once it is unreachable (but close it: until then it keeps its
 * directory locked).
 *
 * <p>Failures are {@link DBException}s with the engine's message (for example {@code "corruption:
 * ... (in 000005.ldb at offset 4096)"}). Null keys, values and options throw {@link
 * NullPointerException}. If the database's Java comparator throws, the call that ran it and every
 * later call throw a {@code DBException} whose cause is the comparator's exception, until the
 * database is closed and reopened; nothing written in the order the failure broke reaches a table.
 */
final class StrataDB extends NativeObject implements StrataDatabase {
    /** {@code getVia}'s answer for an absent key (-2: the value does not fit the scratch). */
    private static final int ABSENT = -1;

    /** Set by {@link #close()} once done: iterators stop handing out entries they read ahead. */
    private volatile boolean closed;

    StrataDB(long handle) {
        super(handle, StrataDB::dispose);
    }

    @Override
    public byte[] get(byte[] key) {
        Objects.requireNonNull(key, "key");
        return get(key, 0, false, true);
    }

    @Override
    public byte[] get(byte[] key, ReadOptions options) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(options, "options");
        StrataSnapshot snapshot = snapshotOf(options);
        try {
            return get(key, handleOf(snapshot), options.verifyChecksums(), options.fillCache());
        } finally {
            Reference.reachabilityFence(snapshot);
        }
    }

    @Override
    public long head(byte[] key) {
        Objects.requireNonNull(key, "key");
        return head(handle, key, 0, false, true);
    }

    @Override
    public long head(byte[] key, ReadOptions options) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(options, "options");
        StrataSnapshot snapshot = snapshotOf(options);
        try {
            return head(handle, key, handleOf(snapshot), options.verifyChecksums(), options.fillCache());
        } finally {
            Reference.reachabilityFence(snapshot);
        }
    }

    @Override
    public DBIterator iterator() {
        return new StrataIterator(this, iterator(handle, 0, false, true));
    }

    @Override
    public DBIterator iterator(ReadOptions options) {
        Objects.requireNonNull(options, "options");
        StrataSnapshot snapshot = snapshotOf(options);
        try {
            long iterator = iterator(handle, handleOf(snapshot), options.verifyChecksums(), options.fillCache());
            return new StrataIterator(this, iterator);
        } finally {
            Reference.reachabilityFence(snapshot);
        }
    }

    @Override
    public StrataKeyIterator keyIterator() {
        return new StrataKeyIterator(keyIterator(handle, 0, false, true));
    }

    @Override
    public StrataKeyIterator keyIterator(ReadOptions options) {
        Objects.requireNonNull(options, "options");
        StrataSnapshot snapshot = snapshotOf(options);
        try {
            return new StrataKeyIterator(keyIterator(handle, handleOf(snapshot), options.verifyChecksums(), options.fillCache()));
        } finally {
            Reference.reachabilityFence(snapshot);
        }
    }

    @Override
    public void put(byte[] key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        put(key, value, false);
    }

    /** Writes; with {@code options.snapshot()}, returns a snapshot taken just after the write. */
    @Override
    public Snapshot put(byte[] key, byte[] value, WriteOptions options) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(options, "options");
        put(key, value, options.sync());
        return snapshotAfter(options);
    }

    @Override
    public void delete(byte[] key) {
        Objects.requireNonNull(key, "key");
        delete(key, false);
    }

    /** Deletes; with {@code options.snapshot()}, returns a snapshot taken just after the write. */
    @Override
    public Snapshot delete(byte[] key, WriteOptions options) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(options, "options");
        delete(key, options.sync());
        return snapshotAfter(options);
    }

    @Override
    public void write(WriteBatch updates) {
        write(updates, false);
    }

    /** Writes; with {@code options.snapshot()}, returns a snapshot taken just after the write. */
    @Override
    public Snapshot write(WriteBatch updates, WriteOptions options) {
        Objects.requireNonNull(options, "options");
        write(updates, options.sync());
        return snapshotAfter(options);
    }

    private void write(WriteBatch updates, boolean sync) {
        Objects.requireNonNull(updates, "updates");
        if (!(updates instanceof StrataWriteBatch)) {
            throw new DBException("not a batch of this database's factory: " + updates.getClass().getName());
        }
        ((StrataWriteBatch) updates).writeTo((records, length) -> write(records, length, sync));
    }

    /** A batch's records written through this thread's scratch when they fit it, else as an array. */
    private void write(byte[] records, int length, boolean sync) {
        if (length > Scratch.CAPACITY) {
            write(handle, records, length, sync);
            return;
        }
        Scratch scratch = Scratch.get();
        scratch.put(0, records, length);
        writeVia(handle, scratch.address, Scratch.CAPACITY, length, sync);
        Reference.reachabilityFence(scratch);
    }

    /** A get through this thread's scratch; values that do not fit it are fetched again as arrays. */
    private byte[] get(byte[] key, long snapshot, boolean verifyChecksums, boolean fillCache) {
        if (key.length <= Scratch.CAPACITY) {
            Scratch scratch = Scratch.get();
            scratch.put(0, key);
            int length = getVia(handle, scratch.address, Scratch.CAPACITY, key.length, snapshot, verifyChecksums,
                    fillCache);
            Reference.reachabilityFence(scratch);
            if (length >= 0) {
                return scratch.bytes(key.length, length);
            }
            if (length == ABSENT) {
                return null;
            }
        }
        return get(handle, key, snapshot, verifyChecksums, fillCache);
    }

    private void put(byte[] key, byte[] value, boolean sync) {
        if ((long) key.length + value.length > Scratch.CAPACITY) {
            put(handle, key, value, sync);
            return;
        }
        Scratch scratch = Scratch.get();
        scratch.put(0, key);
        scratch.put(key.length, value);
        putVia(handle, scratch.address, Scratch.CAPACITY, key.length, value.length, sync);
        Reference.reachabilityFence(scratch);
    }

    private void delete(byte[] key, boolean sync) {
        if (key.length > Scratch.CAPACITY) {
            delete(handle, key, sync);
            return;
        }
        Scratch scratch = Scratch.get();
        scratch.put(0, key);
        deleteVia(handle, scratch.address, Scratch.CAPACITY, key.length, sync);
        Reference.reachabilityFence(scratch);
    }

    @Override
    public WriteBatch createWriteBatch() {
        return new StrataWriteBatch();
    }

    @Override
    public Snapshot getSnapshot() {
        return new StrataSnapshot(snapshot(handle));
    }

    /** Approximate bytes on disk of each range ({@code start} inclusive, {@code limit} exclusive). */
    @Override
    public long[] getApproximateSizes(Range... ranges) {
        Objects.requireNonNull(ranges, "ranges");
        byte[][] bounds = new byte[2 * ranges.length][];
        for (int i = 0; i < ranges.length; i++) {
            Range range = Objects.requireNonNull(ranges[i], "range");
            bounds[2 * i] = Objects.requireNonNull(range.start(), "range start");
            bounds[2 * i + 1] = Objects.requireNonNull(range.limit(), "range limit");
        }
        return approximateSizes(handle, bounds);
    }

    /**
     * A property ({@code leveldb.num-files-at-level<N>}, {@code leveldb.stats}, {@code
     * leveldb.sstables}, {@code leveldb.approximate-memory-usage}), or null for an unknown name.
     */
    @Override
    public String getProperty(String name) {
        Objects.requireNonNull(name, "name");
        return property(handle, name);
    }

    /**
     * Stops background compactions until {@link #resumeCompactions()}, waiting for the running one
     * to end. Writes go on until level 0 fills up, then wait for the resume. Calls nest.
     */
    @Override
    public void suspendCompactions() {
        suspendCompactions(handle);
    }

    /** Ends one {@link #suspendCompactions()}. */
    @Override
    public void resumeCompactions() {
        resumeCompactions(handle);
    }

    /**
     * Compacts the keys in {@code [begin, end]} (null: unbounded) down the levels, dropping
     * overwritten and deleted entries no snapshot needs.
     */
    @Override
    public void compactRange(byte[] begin, byte[] end) {
        compactRange(handle, begin, end);
    }

    @Override
    public boolean isReadOnly() {
        return isReadOnly(handle);
    }

    @Override
    public void refresh() {
        refresh(handle);
    }

    @Override
    public void checkpoint(File dir) {
        Objects.requireNonNull(dir, "dir");
        checkpoint(handle, dir.getPath());
    }

    /** Closes the database and its iterators, after the calls in flight. Idempotent. */
    @Override
    public void close() {
        close(handle);
        // After the native close: once this is seen, the native iterators are closed too, so
        // an iterator that drops what it read ahead gets the "closed" error from its next call
        // (set before, that call could still run, past the entries dropped).
        closed = true;
    }

    /** Whether {@link #close()} was called (for {@code StrataIterator}'s read-ahead). */
    boolean isClosed() {
        return closed;
    }

    /** Deletes {@code key} from the database (for {@code StrataIterator.remove}). */
    void deleteKey(byte[] key) {
        delete(key, false);
    }

    private Snapshot snapshotAfter(WriteOptions options) {
        return options.snapshot() ? getSnapshot() : null;
    }

    private static StrataSnapshot snapshotOf(ReadOptions options) {
        Snapshot snapshot = options.snapshot();
        if (snapshot == null || snapshot instanceof StrataSnapshot) {
            return (StrataSnapshot) snapshot;
        }
        throw new DBException("not a snapshot of a Strata database: " + snapshot.getClass().getName());
    }

    private static long handleOf(StrataSnapshot snapshot) {
        return snapshot == null ? 0 : snapshot.handle;
    }

    /** The value's length, its bytes in the scratch after the key; or {@link #ABSENT}, or -2 (too large). */
    private native int getVia(long handle, long scratch, int capacity, int keyLength, long snapshot,
            boolean verifyChecksums, boolean fillCache);

    private native void putVia(long handle, long scratch, int capacity, int keyLength, int valueLength, boolean sync);

    private native void deleteVia(long handle, long scratch, int capacity, int keyLength, boolean sync);

    /** Writes the batch records ({@code StrataWriteBatch}'s format) at the start of the scratch. */
    private native void writeVia(long handle, long scratch, int capacity, int length, boolean sync);

    private native byte[] get(long handle, byte[] key, long snapshot, boolean verifyChecksums, boolean fillCache);

    private native long head(long handle, byte[] key, long snapshot, boolean verifyChecksums, boolean fillCache);

    private native void put(long handle, byte[] key, byte[] value, boolean sync);

    private native void delete(long handle, byte[] key, boolean sync);

    private native void write(long handle, byte[] records, int length, boolean sync);

    private native long snapshot(long handle);

    private native long iterator(long handle, long snapshot, boolean verifyChecksums, boolean fillCache);

    private native long keyIterator(long handle, long snapshot, boolean verifyChecksums, boolean fillCache);

    private native long[] approximateSizes(long handle, byte[][] bounds);

    private native String property(long handle, String name);

    private native void compactRange(long handle, byte[] begin, byte[] end);

    private native void suspendCompactions(long handle);

    private native void resumeCompactions(long handle);

    private native boolean isReadOnly(long handle);

    private native void refresh(long handle);

    private native void checkpoint(long handle, String dir);

    private native void close(long handle);

    private static native void dispose(long handle);
}
