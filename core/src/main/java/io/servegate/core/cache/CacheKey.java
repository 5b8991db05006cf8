package io.servegate.core.cache;

import java.util.Arrays;

/**
 * One prediction: a model version applied to one input, identified by its encoded bytes.
 *
 * <p>The bytes are compared with {@link Arrays#equals(byte[], byte[])} and hashed once: on the
 * hit path this is most of the cost, and protobuf's {@code ByteString.equals} was about 20 times
 * slower than the vectorised array comparison for a 784-float input (JMH, PredictionCacheBenchmark).
 * The array is owned by the key; callers must not modify it afterwards.
 */
public final class CacheKey {

    private final String model;
    private final String version;
    private final byte[] input;
    private final int hash;

    public CacheKey(String model, String version, byte[] input) {
        this(model, version, new EncodedInput(input));
    }

    /** The key of one model version's prediction of an input already hashed for other models' keys. */
    public CacheKey(String model, String version, EncodedInput input) {
        this.model = model;
        this.version = version;
        this.input = input.bytes();
        this.hash = 31 * (31 * model.hashCode() + version.hashCode()) + input.hash();
    }

    public String model() {
        return model;
    }

    public String version() {
        return version;
    }

    /** Approximate heap footprint, for the byte-bounded cache. */
    int weight(String output) {
        return 64 + 2 * (model.length() + version.length() + output.length()) + input.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CacheKey k && hash == k.hash && model.equals(k.model) && version.equals(k.version)
                && Arrays.equals(input, k.input);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "CacheKey[" + model + ":" + version + ", " + input.length + " bytes]";
    }
}
