package io.servegate.core.cache;

import java.util.Arrays;

/**
 * An input's encoded bytes and their hash, computed once: a feedback or an ensemble query looks
 * up the same input for several models, and hashing a 784-float input was a large part of each
 * lookup. The array is owned by this object; callers must not modify it afterwards.
 */
public final class EncodedInput {

    private final byte[] bytes;
    private final int hash;

    public EncodedInput(byte[] bytes) {
        this.bytes = bytes;
        this.hash = Arrays.hashCode(bytes);
    }

    byte[] bytes() {
        return bytes;
    }

    int hash() {
        return hash;
    }
}
