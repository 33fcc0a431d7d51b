package io.github.stratakv;

import java.util.Arrays;
import java.util.Objects;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.WriteBatch;

/**
 * Updates applied together, all or none, by {@code DB.write}. The batch is kept (it can be written
 * again) until {@link #close()}. Safe to share between threads, though its updates are applied in
 * the order the calls happen.
 *
 * <p>The updates are gathered in Java, in a byte array the native write decodes ({@code
 * native/src/batch.rs}): per update a tag byte ({@link #PUT} or {@link #DELETE}), the key's
 * length as a 4-byte little-endian integer and the key, then for a put the value's length and the
 * value. So a batch costs no native object and a single native call (a batch of one update was
 * about twice as slow when each {@code put} crossed into native code and each batch needed a
 * native object and its cleaner).
 */
final class StrataWriteBatch implements WriteBatch {
    static final byte DELETE = 0;
    static final byte PUT = 1;

    private byte[] records = new byte[64];
    private int length;
    private boolean closed;

    @Override
    public synchronized WriteBatch put(byte[] key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        checkOpen();
        reserve(9L + key.length + value.length);
        records[length++] = PUT;
        append(key);
        append(value);
        return this;
    }

    @Override
    public synchronized WriteBatch delete(byte[] key) {
        Objects.requireNonNull(key, "key");
        checkOpen();
        reserve(5L + key.length);
        records[length++] = DELETE;
        append(key);
        return this;
    }

    /** Frees the batch; using it afterwards fails. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        records = null;
    }

    /** Writes the batch through {@code writer}, which gets the records and their length. */
    synchronized void writeTo(RecordsWriter writer) {
        checkOpen();
        writer.write(records, length);
    }

    /** The native write of a batch's records. */
    interface RecordsWriter {
        void write(byte[] records, int length);
    }

    private void checkOpen() {
        if (closed) {
            throw new DBException("the write batch is closed");
        }
    }

    private void reserve(long more) {
        long needed = length + more;
        if (needed > Integer.MAX_VALUE - 8) {
            throw new DBException("a write batch cannot hold more than 2 GiB");
        }
        if (needed > records.length) {
            records = Arrays.copyOf(records, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * records.length)));
        }
    }

    private void append(byte[] bytes) {
        int n = bytes.length;
        records[length] = (byte) n;
        records[length + 1] = (byte) (n >>> 8);
        records[length + 2] = (byte) (n >>> 16);
        records[length + 3] = (byte) (n >>> 24);
        System.arraycopy(bytes, 0, records, length + 4, n);
        length += 4 + n;
    }
}
