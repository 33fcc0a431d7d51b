package io.github.stratakv;

import java.lang.ref.Reference;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.iq80.leveldb.DBIterator;

/**
 * A cursor over a database's entries in key order, as the database was when the iterator was made
 * (or as of its snapshot): later writes are invisible to it.
 *
 * <p>The cursor sits at the entry {@link #next()} returns, or at the end; a new iterator is at the
 * first entry. {@link #prev()} moves back one entry and returns it; from the end it returns the
 * last entry. {@link #seekToLast()} positions at the last entry, {@link #seek} at the first key
 * {@code >=} the target. {@link #remove()} deletes the last entry returned from the database (the
 * iterator keeps seeing it). Not meant for use from several threads at once, though that is safe.
 * {@link #close()} frees it (closing its database does too); any later call throws a {@code
 * DBException}.
 *
 * <p>Going forward it reads ahead: each native call moves the native cursor past a run of entries
 * left in the thread's scratch buffer (1 at first after a positioning, doubling up to {@link
 * #MAX_AHEAD} while {@code next()} goes on), which this iterator hands out one by one. Before any
 * other move it seeks the native cursor back to the first entry it has not handed out, so every
 * call sees the position the model above describes.
 */
final class StrataIterator extends NativeObject implements DBIterator {
    /** {@link #nextBatchVia}'s answer when the next entry does not fit the scratch. */
    private static final int TOO_LARGE = -2;
    /** The most entries one native call reads ahead. */
    static final int MAX_AHEAD = 256;

    private final StrataDB db;
    /** The key of the entry {@code next()} or {@code prev()} last returned, for {@code remove()}. */
    private byte[] lastReturned;
    /** Entries read ahead: those at {@code aheadAt} and after are not handed out yet. */
    private byte[][] aheadKeys = new byte[0][];
    private byte[][] aheadValues = new byte[0][];
    private int aheadAt;
    private int aheadCount;
    /** How many entries the next native call reads ahead. */
    private int aheadSize = 1;

    StrataIterator(StrataDB db, long handle) {
        super(handle, StrataIterator::dispose);
        this.db = db;
    }

    @Override
    public synchronized void seek(byte[] key) {
        Objects.requireNonNull(key, "key");
        lastReturned = null;
        dropAhead();
        seek(handle, key);
    }

    @Override
    public synchronized void seekToFirst() {
        lastReturned = null;
        dropAhead();
        seekToFirst(handle);
    }

    @Override
    public synchronized void seekToLast() {
        lastReturned = null;
        dropAhead();
        seekToLast(handle);
    }

    @Override
    public synchronized boolean hasNext() {
        return readAheadLeft() || readAhead() != 0;
    }

    @Override
    public synchronized Map.Entry<byte[], byte[]> next() {
        if (readAheadLeft() || readAhead() > 0) {
            Map.Entry<byte[], byte[]> entry = new SimpleImmutableEntry<>(aheadKeys[aheadAt], aheadValues[aheadAt]);
            aheadAt++;
            return returned(entry);
        }
        return returned(entry(next(handle)));
    }

    @Override
    public synchronized Map.Entry<byte[], byte[]> peekNext() {
        if (readAheadLeft() || readAhead() > 0) {
            return new SimpleImmutableEntry<>(aheadKeys[aheadAt], aheadValues[aheadAt]);
        }
        return entry(peekNext(handle));
    }

    @Override
    public synchronized boolean hasPrev() {
        backToPosition();
        return hasPrev(handle);
    }

    @Override
    public synchronized Map.Entry<byte[], byte[]> prev() {
        backToPosition();
        return returned(entry(prev(handle)));
    }

    @Override
    public synchronized Map.Entry<byte[], byte[]> peekPrev() {
        backToPosition();
        return entry(peekPrev(handle));
    }

    /** Deletes the key {@code next()} or {@code prev()} last returned from the database. */
    @Override
    public synchronized void remove() {
        if (lastReturned == null) {
            throw new IllegalStateException("remove() needs a next() or prev() since the last remove() or seek");
        }
        db.deleteKey(lastReturned);
        lastReturned = null;
    }

    /** Frees the iterator. Idempotent. */
    @Override
    public synchronized void close() {
        dropAhead();
        close(handle);
    }

    /**
     * Reads entries ahead into the buffer (which is empty): returns how many, 0 at the end, or
     * {@link #TOO_LARGE} when the next entry does not fit the scratch (the native cursor stays on
     * it, for the array methods).
     */
    private int readAhead() {
        Scratch scratch = Scratch.get();
        int count = nextBatchVia(handle, scratch.address, Scratch.CAPACITY, aheadSize);
        Reference.reachabilityFence(scratch);
        if (count <= 0) {
            dropAhead();
            return count;
        }
        if (aheadKeys.length < count) {
            aheadKeys = new byte[count][];
            aheadValues = new byte[count][];
        }
        int at = 0;
        for (int i = 0; i < count; i++) {
            int keyLength = scratch.intAt(at);
            int valueLength = scratch.intAt(at + 4);
            aheadKeys[i] = scratch.bytes(at + 8, keyLength);
            aheadValues[i] = scratch.bytes(at + 8 + keyLength, valueLength);
            at += 8 + keyLength + valueLength;
        }
        aheadAt = 0;
        aheadCount = count;
        aheadSize = Math.min(aheadSize * 2, MAX_AHEAD);
        return count;
    }

    /**
     * Whether entries read ahead are left to hand out; never once the database is closed (the
     * native call that follows then throws, as it would without read-ahead).
     */
    private boolean readAheadLeft() {
        if (aheadAt < aheadCount && db.isClosed()) {
            dropAhead();
        }
        return aheadAt < aheadCount;
    }

    /** Moves the native cursor back to the first entry read ahead and not handed out, if any. */
    private void backToPosition() {
        if (aheadAt < aheadCount) {
            seek(handle, aheadKeys[aheadAt]);
        }
        dropAhead();
    }

    /** Forgets the entries read ahead; the next read ahead starts small again. */
    private void dropAhead() {
        for (int i = 0; i < aheadCount; i++) {
            aheadKeys[i] = null;
            aheadValues[i] = null;
        }
        aheadAt = 0;
        aheadCount = 0;
        aheadSize = 1;
    }

    private Map.Entry<byte[], byte[]> returned(Map.Entry<byte[], byte[]> entry) {
        lastReturned = entry.getKey();
        return entry;
    }

    private static Map.Entry<byte[], byte[]> entry(byte[][] pair) {
        if (pair == null) {
            throw new NoSuchElementException();
        }
        return new SimpleImmutableEntry<>(pair[0], pair[1]);
    }

    private native void seek(long handle, byte[] key);

    private native void seekToFirst(long handle);

    private native void seekToLast(long handle);

    /**
     * Moves past up to {@code max} entries, leaving each in the scratch as its key's length, its
     * value's (4 bytes each, native byte order), its key and its value; returns how many, 0 at the
     * end, or {@link #TOO_LARGE} without moving when the first does not fit.
     */
    private native int nextBatchVia(long handle, long scratch, int capacity, int max);

    private native byte[][] next(long handle);

    private native byte[][] peekNext(long handle);

    private native boolean hasPrev(long handle);

    private native byte[][] prev(long handle);

    private native byte[][] peekPrev(long handle);

    private native void close(long handle);

    private static native void dispose(long handle);
}
