package io.github.stratakv;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;

/**
 * A Java object with a native side, reached through a {@code long} handle.
 *
 * <p>The handle contract (see the native crate's {@code handle.rs}): the handle is passed only to
 * the native methods of its own class, only while this object is reachable (instance native
 * methods keep {@code this} reachable; a handle of another object is followed by {@link
 * java.lang.ref.Reference#reachabilityFence}), and it is released exactly once, by the {@link
 * Cleaner} once this object is unreachable. {@code close()} empties the native side (files,
 * threads, memory are freed there) but leaves the handle valid, so a call after close gets an
 * error, never freed memory; and an object never closed is still emptied by the cleaner.
 */
abstract class NativeObject {
    private static final Cleaner CLEANER = Cleaner.create();

    static {
        NativeLibrary.load();
    }

    /** The native side; valid until this object is unreachable. */
    final long handle;

    /**
     * @param handle the handle a native method made for this object
     * @param dispose the static native method that releases the handle
     */
    NativeObject(long handle, LongConsumer dispose) {
        this.handle = handle;
        CLEANER.register(this, () -> dispose.accept(handle));
    }
}
