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
 */
final class StrataIterator extends NativeObject implements DBIterator {
    /** A {@code ...Via} method's answer when there is no entry. */
    private static final long NONE = -1;
    /** A {@code ...Via} method's answer when the entry does not fit the scratch. */
    private static final long TOO_LARGE = -2;

    private final StrataDB db;
    /** The key of the entry {@code next()} or {@code prev()} last returned, for {@code remove()}. */
    private byte[] lastReturned;

    StrataIterator(StrataDB db, long handle) {
        super(handle, StrataIterator::dispose);
        this.db = db;
    }

    @Override
    public void seek(byte[] key) {
        Objects.requireNonNull(key, "key");
        lastReturned = null;
        seek(handle, key);
    }

    @Override
    public void seekToFirst() {
        lastReturned = null;
        seekToFirst(handle);
    }

    @Override
    public void seekToLast() {
        lastReturned = null;
        seekToLast(handle);
    }

    @Override
    public boolean hasNext() {
        return hasNext(handle);
    }

    @Override
    public Map.Entry<byte[], byte[]> next() {
        Scratch scratch = Scratch.get();
        long lengths = nextVia(handle, scratch.address, Scratch.CAPACITY);
        return returned(lengths == TOO_LARGE ? entry(next(handle)) : entry(scratch, lengths));
    }

    @Override
    public Map.Entry<byte[], byte[]> peekNext() {
        Scratch scratch = Scratch.get();
        long lengths = peekNextVia(handle, scratch.address, Scratch.CAPACITY);
        return lengths == TOO_LARGE ? entry(peekNext(handle)) : entry(scratch, lengths);
    }

    @Override
    public boolean hasPrev() {
        return hasPrev(handle);
    }

    @Override
    public Map.Entry<byte[], byte[]> prev() {
        return returned(entry(prev(handle)));
    }

    @Override
    public Map.Entry<byte[], byte[]> peekPrev() {
        return entry(peekPrev(handle));
    }

    /** Deletes the key {@code next()} or {@code prev()} last returned from the database. */
    @Override
    public void remove() {
        if (lastReturned == null) {
            throw new IllegalStateException("remove() needs a next() or prev() since the last remove() or seek");
        }
        db.deleteKey(lastReturned);
        lastReturned = null;
    }

    /** Frees the iterator. Idempotent. */
    @Override
    public void close() {
        close(handle);
    }

    private Map.Entry<byte[], byte[]> returned(Map.Entry<byte[], byte[]> entry) {
        lastReturned = entry.getKey();
        return entry;
    }

    /** The entry a {@code ...Via} method left in {@code scratch}: key, then value. */
    private static Map.Entry<byte[], byte[]> entry(Scratch scratch, long lengths) {
        Reference.reachabilityFence(scratch);
        if (lengths == NONE) {
            throw new NoSuchElementException();
        }
        int keyLength = (int) (lengths >>> 32);
        int valueLength = (int) lengths;
        return new SimpleImmutableEntry<>(scratch.bytes(0, keyLength), scratch.bytes(keyLength, valueLength));
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

    private native boolean hasNext(long handle);

    /**
     * Moves as {@link #next(long)} does, leaving the entry in the scratch: returns its key's length
     * times 2^32 plus its value's length, {@link #NONE}, or {@link #TOO_LARGE} (without moving).
     */
    private native long nextVia(long handle, long scratch, int capacity);

    /** {@link #peekNext(long)} through the scratch, as {@link #nextVia}. */
    private native long peekNextVia(long handle, long scratch, int capacity);

    private native byte[][] next(long handle);

    private native byte[][] peekNext(long handle);

    private native boolean hasPrev(long handle);

    private native byte[][] prev(long handle);

    private native byte[][] peekPrev(long handle);

    private native void close(long handle);

    private static native void dispose(long handle);
}
