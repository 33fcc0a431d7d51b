package io.github.stratakv;

import java.io.Closeable;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * A cursor over a database's keys in order, each with its value's length in bytes, as the database
 * was when the iterator was made (or as of its snapshot). It never reads a value kept in a value
 * file ({@link StrataOptions#valueSeparation(int)}): a scan of keys reads the tree alone, and
 * costs what a scan of small values does however large the values are.
 *
 * <p>The cursor sits at the key {@link #next()} returns, or at the end; a new iterator is at the
 * first key. {@link #seek} positions at the first key {@code >=} the target. Forward only. Not
 * meant for use from several threads at once, though that is safe. {@link #close()} frees it
 * (closing its database does too); any later call throws a {@code DBException}.
 *
 * <pre>{@code
 * try (StrataKeyIterator keys = db.keyIterator()) {
 *     for (keys.seek(prefix); keys.hasNext(); ) {
 *         Map.Entry<byte[], Long> entry = keys.next(); // key, value length
 *     }
 * }
 * }</pre>
 */
public final class StrataKeyIterator extends NativeObject implements Iterator<Map.Entry<byte[], Long>>, Closeable {
    /** Where the native methods write the value's length. */
    private final long[] length = new long[1];

    StrataKeyIterator(long handle) {
        super(handle, StrataKeyIterator::dispose);
    }

    /** Positions at the first key {@code >=} {@code key}. */
    public synchronized void seek(byte[] key) {
        Objects.requireNonNull(key, "key");
        seek(handle, key);
    }

    /** Positions at the first key. */
    public synchronized void seekToFirst() {
        seekToFirst(handle);
    }

    @Override
    public synchronized boolean hasNext() {
        return peekNext(handle, length) != null;
    }

    /** The key at the position and its value's length; the cursor moves past it. */
    @Override
    public synchronized Map.Entry<byte[], Long> next() {
        return entry(next(handle, length));
    }

    /** The key at the position and its value's length, without moving. */
    public synchronized Map.Entry<byte[], Long> peekNext() {
        return entry(peekNext(handle, length));
    }

    /** Frees the iterator. Idempotent. */
    @Override
    public synchronized void close() {
        close(handle);
    }

    private Map.Entry<byte[], Long> entry(byte[] key) {
        if (key == null) {
            throw new NoSuchElementException();
        }
        return new SimpleImmutableEntry<>(key, length[0]);
    }

    private native void seek(long handle, byte[] key);

    private native void seekToFirst(long handle);

    /** The key at the position (null at the end), its value's length in {@code length[0]}. */
    private native byte[] peekNext(long handle, long[] length);

    /** {@link #peekNext(long, long[])}, then moves past the key. */
    private native byte[] next(long handle, long[] length);

    private native void close(long handle);

    private static native void dispose(long handle);
}
