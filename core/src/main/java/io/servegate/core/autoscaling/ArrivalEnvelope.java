package io.servegate.core.autoscaling;

import java.util.Arrays;

/**
 * A traffic envelope in the sense of network calculus (InferLine §5): for each window length
 * T, the most arrivals seen in any window of length T. Arrivals are counted in 10 ms buckets
 * over the last two minutes, so a window is exact to a bucket and the longest window (60 s) can
 * be slid over the last 60 s. Not thread-safe: its owner serialises records and reads.
 */
public final class ArrivalEnvelope {

    /** Bucket width: the envelope's time resolution. */
    public static final long BUCKET_NANOS = 10_000_000L;
    /** The window lengths reported, 0.1 s to 60 s. */
    public static final long[] WINDOWS_NANOS = {
        100_000_000L, 250_000_000L, 500_000_000L, 1_000_000_000L, 2_000_000_000L, 5_000_000_000L,
        10_000_000_000L, 30_000_000_000L, 60_000_000_000L};
    /** The longest look-back a read may ask for. */
    public static final long MAX_LOOKBACK_NANOS = 60_000_000_000L;

    private static final int SIZE = (int) ((MAX_LOOKBACK_NANOS + WINDOWS_NANOS[WINDOWS_NANOS.length - 1]) / BUCKET_NANOS);

    private final int[] counts = new int[SIZE];
    /** Index (time / bucket) of the newest bucket; Long.MIN_VALUE before the first arrival. */
    private long head = Long.MIN_VALUE;

    /** One arrival at {@code now}. */
    public void record(long now) {
        advance(now);
        counts[slot(head)]++;
    }

    /**
     * The most arrivals in any window of length {@code windowNanos} (rounded up to whole buckets)
     * that ends within the last {@code lookbackNanos}; windows reaching back before the first
     * arrival count what they cover.
     */
    public long maxArrivals(long windowNanos, long lookbackNanos, long now) {
        if (windowNanos <= 0 || lookbackNanos <= 0 || lookbackNanos > MAX_LOOKBACK_NANOS
                || windowNanos > WINDOWS_NANOS[WINDOWS_NANOS.length - 1]) {
            throw new IllegalArgumentException("window " + windowNanos + " ns, look-back " + lookbackNanos + " ns");
        }
        advance(now);
        int width = (int) ((windowNanos + BUCKET_NANOS - 1) / BUCKET_NANOS);
        int ends = (int) Math.max(1, lookbackNanos / BUCKET_NANOS);
        long first = head - ends + 1; // the oldest window end
        long sum = 0;
        for (long b = first - width + 1; b <= first; b++) {
            sum += count(b);
        }
        long max = sum;
        for (long end = first + 1; end <= head; end++) {
            sum += count(end) - count(end - width);
            max = Math.max(max, sum);
        }
        return max;
    }

    /** {@link #maxArrivals} for each of {@link #WINDOWS_NANOS}. */
    public long[] envelope(long lookbackNanos, long now) {
        long[] out = new long[WINDOWS_NANOS.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = maxArrivals(WINDOWS_NANOS[i], lookbackNanos, now);
        }
        return out;
    }

    private long count(long bucket) {
        return bucket > head - SIZE && bucket <= head ? counts[slot(bucket)] : 0;
    }

    private void advance(long now) {
        long bucket = Math.floorDiv(now, BUCKET_NANOS);
        if (head == Long.MIN_VALUE) {
            head = bucket;
        } else if (bucket > head) {
            if (bucket - head >= SIZE) {
                Arrays.fill(counts, 0);
            } else {
                for (long b = head + 1; b <= bucket; b++) {
                    counts[slot(b)] = 0;
                }
            }
            head = bucket;
        }
    }

    private static int slot(long bucket) {
        return (int) Math.floorMod(bucket, (long) SIZE);
    }
}
