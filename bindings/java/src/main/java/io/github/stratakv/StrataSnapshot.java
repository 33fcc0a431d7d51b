package io.github.stratakv;

import org.iq80.leveldb.Snapshot;

/**
 * A consistent view of one database, pinned until {@link #close()} (or until it is unreachable).
 * Reads and iterators given it in {@code ReadOptions.snapshot} see the database as it was when it
 * was taken. Thread-safe.
 */
final class StrataSnapshot extends NativeObject implements Snapshot {
    StrataSnapshot(long handle) {
        super(handle, StrataSnapshot::dispose);
    }

    /** Releases the view; reads given it afterwards fail. Idempotent. */
    @Override
    public void close() {
        close(handle);
    }

    private native void close(long handle);

    private static native void dispose(long handle);
}
