package io.github.stratakv;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A thread's direct buffer through which the hot native calls ({@code get}, {@code put}, {@code
 * delete}, an iterator's entries) pass keys and values: Java copies a key in, the native method
 * reads it and writes its answer there, and Java copies the answer out into a new array. Such a
 * call makes no JNI function call at all (each costs a transition into the VM; {@code
 * NewByteArray} also allocates outside the thread's allocation buffer), which makes a cached get
 * about twice as fast as passing arrays.
 *
 * <p>The buffer is confined to its thread, so its position is free to use (the absolute bulk
 * methods need Java 13; the binding supports 11).
 *
 * <p>The contract with native code: a method taking a scratch gets its address and {@link
 * #CAPACITY}, uses it only during the call, and is called only from the thread owning it (the
 * buffer is reachable from the thread-local and kept so by {@code Reference.reachabilityFence}).
 * Payloads that do not fit take the array-passing methods.
 */
final class Scratch {
    /** Bytes per thread; a key and value pair larger than this takes the array path. */
    static final int CAPACITY = 64 << 10;

    private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(Scratch::new);

    static {
        NativeLibrary.load();
    }

    /** In native byte order, as native code writes the lengths {@link #intAt} reads. */
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(CAPACITY).order(ByteOrder.nativeOrder());
    /** The buffer's address, for native code. */
    final long address = address(buffer);

    private Scratch() {}

    /** This thread's scratch. */
    static Scratch get() {
        return LOCAL.get();
    }

    /** Copies {@code bytes} in at {@code offset} (the caller checked that they fit). */
    void put(int offset, byte[] bytes) {
        put(offset, bytes, bytes.length);
    }

    /** Copies the first {@code length} bytes of {@code bytes} in at {@code offset} (they fit: the caller checked). */
    void put(int offset, byte[] bytes, int length) {
        buffer.position(offset);
        buffer.put(bytes, 0, length);
    }

    /** The 4-byte integer at {@code offset}, in native byte order. */
    int intAt(int offset) {
        return buffer.getInt(offset);
    }

    /** A new array of the {@code length} bytes at {@code offset}. */
    byte[] bytes(int offset, int length) {
        byte[] bytes = new byte[length];
        buffer.position(offset);
        buffer.get(bytes);
        return bytes;
    }

    private static native long address(ByteBuffer buffer);
}
