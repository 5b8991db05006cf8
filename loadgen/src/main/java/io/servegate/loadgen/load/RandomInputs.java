package io.servegate.loadgen.load;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Fresh random float vectors, one per request, so that no two requests carry the same input (a
 * prediction cache could not answer them) — cheaply enough to generate thousands per second on
 * the load generator's thread. Each element is {@code k / 10^6} for a uniform integer
 * {@code k} in {@code [0, 10^6)}, which is written in JSON as exactly {@code 0.dddddd}, so the
 * JSON body needs no float formatting. Safe to use from many threads.
 */
public final class RandomInputs {

    private static final byte[] PREFIX = "{\"input\":[".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SUFFIX = "]}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BATCH_PREFIX = "{\"input_batch\":[".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OIP_SUFFIX = "]}]}".getBytes(StandardCharsets.US_ASCII);
    /** {@code 0.dddddd} plus a comma. */
    private static final int ELEMENT_BYTES = 9;
    private static final int LEVELS = 1_000_000;

    private final int length;
    private final byte[] oipPrefix;

    /** @param length floats per vector, {@code ≥ 1} */
    public RandomInputs(int length) {
        if (length < 1) {
            throw new IllegalArgumentException("input length must be at least 1, got " + length);
        }
        this.length = length;
        this.oipPrefix = ("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1," + length
                + "],\"data\":[").getBytes(StandardCharsets.US_ASCII);
    }

    public int length() {
        return length;
    }

    /** A new random vector. */
    public float[] vector() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        float[] v = new float[length];
        for (int i = 0; i < length; i++) {
            v[i] = random.nextInt(LEVELS) / (float) LEVELS;
        }
        return v;
    }

    /** A new random vector as the body of a Clipper query: {@code {"input":[0.123456,...]}}, ASCII. */
    public byte[] queryBody() {
        return body(PREFIX, SUFFIX);
    }

    /**
     * A new random vector as the body of an Open Inference Protocol REST infer request: one FP32
     * tensor of shape [1, length] named {@code input}.
     */
    public byte[] oipInferBody() {
        return body(oipPrefix, OIP_SUFFIX);
    }

    /**
     * {@code rows} new random vectors as the body of one Clipper batch query:
     * {@code {"input_batch":[[0.123456,...],...]}}, ASCII.
     */
    public byte[] batchQueryBody(int rows) {
        if (rows < 1) {
            throw new IllegalArgumentException("a batch needs at least 1 row, got " + rows);
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int row = 2 + length * ELEMENT_BYTES - 1; // [vector]
        byte[] body = new byte[BATCH_PREFIX.length + rows * row + rows - 1 + SUFFIX.length];
        System.arraycopy(BATCH_PREFIX, 0, body, 0, BATCH_PREFIX.length);
        int at = BATCH_PREFIX.length;
        for (int r = 0; r < rows; r++) {
            if (r > 0) {
                body[at++] = ',';
            }
            body[at++] = '[';
            at = writeVector(body, at, random);
            body[at++] = ']';
        }
        System.arraycopy(SUFFIX, 0, body, at, SUFFIX.length);
        return body;
    }

    private byte[] body(byte[] prefix, byte[] suffix) {
        byte[] body = new byte[prefix.length + length * ELEMENT_BYTES - 1 + suffix.length];
        System.arraycopy(prefix, 0, body, 0, prefix.length);
        int at = writeVector(body, prefix.length, ThreadLocalRandom.current());
        System.arraycopy(suffix, 0, body, at, suffix.length);
        return body;
    }

    /** Writes a new random vector's elements, comma-separated, from {@code at}; returns where it ends. */
    private int writeVector(byte[] body, int at, ThreadLocalRandom random) {
        for (int i = 0; i < length; i++) {
            if (i > 0) {
                body[at++] = ',';
            }
            int k = random.nextInt(LEVELS);
            body[at++] = '0';
            body[at++] = '.';
            for (int digit = 5; digit >= 0; digit--) {
                body[at + digit] = (byte) ('0' + k % 10);
                k /= 10;
            }
            at += 6;
        }
        return at;
    }

    /**
     * A Clipper query for an app of input type {@code bytes}: {@code n} random bytes, base64, as
     * {@code {"input":"..."}}.
     */
    public static byte[] bytesQueryBody(int n) {
        byte[] raw = new byte[n];
        ThreadLocalRandom.current().nextBytes(raw);
        return ("{\"input\":\"" + Base64.getEncoder().encodeToString(raw) + "\"}").getBytes(StandardCharsets.US_ASCII);
    }
}
