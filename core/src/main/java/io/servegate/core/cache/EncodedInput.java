package io.servegate.core.cache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * An input's encoded bytes and their hash, computed once: a feedback or an ensemble query looks
 * up the same input for several models, and hashing a 784-float input was a large part of each
 * lookup. Equal when the bytes are. The array is owned by this object; callers must not modify it
 * afterwards.
 */
public final class EncodedInput {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final byte[] bytes;
    private final int hash;

    public EncodedInput(byte[] bytes) {
        this.bytes = bytes;
        this.hash = hash(bytes);
    }

    /** The number of encoded bytes. */
    public int length() {
        return bytes.length;
    }

    byte[] bytes() {
        return bytes;
    }

    int hash() {
        return hash;
    }

    /**
     * Eight bytes a step instead of {@link Arrays#hashCode(byte[])}'s one: that loop is a chain of
     * dependent multiplications as long as the input (3,136 for 784 floats), and it showed in
     * feedback profiles. A 64-bit multiplicative sum, then MurmurHash3's finalizer, so that every
     * byte reaches the low bits the hash tables use.
     */
    static int hash(byte[] b) {
        long h = b.length;
        int i = 0;
        for (; i + Long.BYTES <= b.length; i += Long.BYTES) {
            h = (h + (long) LONGS.get(b, i)) * GOLDEN;
        }
        for (; i < b.length; i++) {
            h = (h + b[i]) * GOLDEN;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return (int) h;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EncodedInput e && hash == e.hash && Arrays.equals(bytes, e.bytes);
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
