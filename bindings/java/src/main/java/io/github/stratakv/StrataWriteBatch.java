package io.github.stratakv;

import java.util.Objects;
import org.iq80.leveldb.WriteBatch;

/**
 * Updates applied together, all or none, by {@code DB.write}. The batch is kept (it can be written
 * again) until {@link #close()}. Safe to share between threads, though its updates are applied in
 * the order the calls happen.
 */
final class StrataWriteBatch extends NativeObject implements WriteBatch {
    StrataWriteBatch() {
        super(create(), StrataWriteBatch::dispose);
    }

    @Override
    public WriteBatch put(byte[] key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        put(handle, key, value);
        return this;
    }

    @Override
    public WriteBatch delete(byte[] key) {
        Objects.requireNonNull(key, "key");
        delete(handle, key);
        return this;
    }

    /** Frees the batch; using it afterwards fails. Idempotent. */
    @Override
    public void close() {
        close(handle);
    }

    private static native long create();

    private native void put(long handle, byte[] key, byte[] value);

    private native void delete(long handle, byte[] key);

    private native void close(long handle);

    private static native void dispose(long handle);
}
