package io.servegate.core.batching;

import java.util.Arrays;

/**
 * What a batch of each size costs on one replica, learned from the batches it completed: the
 * per-batch-size action profile of Clockwork (OSDI'20, §4.3), which lets the queue avoid starting
 * work that cannot finish before its deadline.
 *
 * <p>For each batch size the last {@code window} round-trip latencies are kept, and only those
 * younger than {@code maxAgeNanos} count, so a profile learned while the container was slow does
 * not keep its batches from being tried once it is fast again. The estimate of a size is the
 * median of its recent samples: Clockwork predicts from recent runs of a worker whose timing is
 * near deterministic, but here one stall of a shared machine (a GC pause, a descheduled thread)
 * must not make a size look too slow to send, which would leave it unmeasured. A size never
 * measured is interpolated linearly between its measured neighbours, or extrapolated from the
 * two largest measured sizes. Estimates are made non-decreasing in the batch size, so noise
 * cannot make a larger batch look cheaper.
 *
 * <p><b>Outliers and cold shapes.</b> An accelerator's first batch of a new shape often costs
 * hundreds of milliseconds (kernel autotuning, lazy allocation), later ones a few. Kept as the
 * size's estimate, one such sample makes that size, and through monotonicity every larger one,
 * look too slow to send, so it is never measured again. So the other sizes are asked what the
 * size can cost: a batch of {@code b} costs no more than a larger batch, nor more than
 * {@code ⌈b/s⌉} batches of a smaller size {@code s} (batching is never worse than running the
 * batches one after the other). A size with fewer than {@value #TRUSTED_SAMPLES} recent samples
 * whose median is over {@value #OUTLIER_FACTOR} times that bound is estimated at the bound
 * instead: it gets sent, and measured again. Samples age out after {@code maxAgeNanos}, the
 * outliers with them, and a size that keeps measuring slow is believed once it has
 * {@value #TRUSTED_SAMPLES} samples.
 *
 * <p><b>Spread.</b> The median is the right plan only where batches are steady: where a size's
 * latency spreads, half its batches take longer than the median, and a query planned to finish on
 * the median misses its deadline whenever its batch is one of them. So the estimate is the median
 * times a spread factor {@code exp(z·σ̂)}: {@code σ̂} is a robust log-scale deviation of the
 * recent samples (see {@link #spread}), pooled over the sizes since a replica's noise (its
 * machine's) is shared by every size while each size has few recent samples, and {@code z} is the
 * standard normal quantile of {@link #PLANNING_QUANTILE}. Where {@code σ̂} is at most
 * {@value #STEADY_SIGMA} the factor is 1: steady batches plan on the median, as before.
 *
 * <p>Not thread-safe: its {@link BatchQueue} calls it under the queue's lock. Time is passed in,
 * as everywhere in this package.
 */
public final class BatchLatencyProfile {

    /** Recent samples after which a size's median is believed whatever the other sizes say. */
    static final int TRUSTED_SAMPLES = 3;
    /** How far above what the other sizes allow a size's median may be before it is taken for an outlier. */
    public static final double OUTLIER_FACTOR = 1.5;
    /** The share of a spread size's batches planned to finish within its estimate. */
    static final double PLANNING_QUANTILE = 0.75;
    /** The standard normal quantile of {@link #PLANNING_QUANTILE}. */
    private static final double PLANNING_Z = 0.6745;
    /** The standard normal quantile of 0.75: a lognormal's upper quartile is its median times exp(σ·this). */
    private static final double QUARTILE_Z = 0.6745;
    /** A log-scale deviation up to this is taken for steady batches, planned on the median. */
    static final double STEADY_SIGMA = 0.05;

    private final int window;
    private final long maxAgeNanos;
    // Per batch size (index = size), lazily allocated rings of (latency, recordedAt).
    /**
     * Where {@link #recent} sorts a size's young samples: estimates are recomputed up to a hundred
     * times a second per replica, a fresh array per size each time was a visible share of the
     * gateway's allocation per query (docs/performance.md).
     */
    private final long[] young;
    private long[][] latencies = new long[0][];
    private long[][] recordedAt = new long[0][];
    private int[] next = new int[0];

    /**
     * @param window      samples kept per batch size, {@code >= 1}
     * @param maxAgeNanos samples older than this are ignored, {@code > 0}
     */
    public BatchLatencyProfile(int window, long maxAgeNanos) {
        if (window < 1) {
            throw new IllegalArgumentException("window must be >= 1, got " + window);
        }
        if (maxAgeNanos <= 0) {
            throw new IllegalArgumentException("maxAgeNanos must be > 0, got " + maxAgeNanos);
        }
        this.window = window;
        this.maxAgeNanos = maxAgeNanos;
        this.young = new long[window];
    }

    /** Records that a batch of {@code batchSize} took {@code latencyNanos}, measured at {@code now}. */
    public void record(int batchSize, long latencyNanos, long now) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
        }
        if (batchSize >= latencies.length) {
            int n = Math.max(batchSize + 1, latencies.length * 2);
            latencies = Arrays.copyOf(latencies, n);
            recordedAt = Arrays.copyOf(recordedAt, n);
            next = Arrays.copyOf(next, n);
        }
        if (latencies[batchSize] == null) {
            latencies[batchSize] = new long[window];
            recordedAt[batchSize] = new long[window];
            Arrays.fill(recordedAt[batchSize], Long.MIN_VALUE);
        }
        int i = next[batchSize];
        latencies[batchSize][i] = Math.max(0, latencyNanos);
        recordedAt[batchSize][i] = now;
        next[batchSize] = (i + 1) % window;
    }

    /**
     * Estimates for every batch size from 1 to {@code maxSize}.
     *
     * @param maxSize the largest size of interest, {@code >= 1}
     * @param now     the current time, for the samples' age
     * @return {@code e} with {@code e[b]} the estimated latency of a batch of {@code b} for
     *         {@code 1 <= b <= maxSize} (non-decreasing in {@code b}; {@code e[0]} unused), or
     *         {@code null} if no size has a recent sample
     */
    public long[] estimates(int maxSize, long now) {
        return estimates(maxSize, now, maxAgeNanos);
    }

    /**
     * As {@link #estimates(int, long)}, counting samples up to {@code maxAgeNanos} old instead of
     * the profile's own age limit ({@link Long#MAX_VALUE}: every sample still in the window).
     */
    public long[] estimates(int maxSize, long now, long maxAgeNanos) {
        long[] measured = new long[latencies.length]; // recent estimate per size, or -1 (size 0: unused)
        Arrays.fill(measured, -1);
        int[] counts = new int[latencies.length];
        for (int s = 1; s < measured.length; s++) {
            measured[s] = recent(s, now, maxAgeNanos, counts);
        }
        boundOutliers(measured, counts);
        double factor = spreadFactor(spread(now, maxAgeNanos, measured, counts));
        int largest = -1;
        int secondLargest = -1;
        for (int s = 0; s < measured.length; s++) {
            if (measured[s] >= 0) {
                secondLargest = largest;
                largest = s;
            }
        }
        if (largest == -1) {
            return null;
        }
        long[] e = new long[maxSize + 1];
        int below = -1; // largest measured size < b
        int above = nextMeasured(measured, 1); // smallest measured size >= b
        for (int b = 1; b <= maxSize; b++) {
            if (above != -1 && above < b) {
                below = above;
                above = nextMeasured(measured, b);
            }
            long estimate;
            if (above == b) {
                estimate = measured[b];
            } else if (above != -1 && below != -1) {
                estimate = interpolate(below, measured[below], above, measured[above], b);
            } else if (above != -1) {
                estimate = measured[above]; // only larger sizes known: a smaller batch costs no more
            } else if (secondLargest != -1) {
                estimate = interpolate(secondLargest, measured[secondLargest], largest, measured[largest], b);
            } else {
                estimate = Math.round((double) measured[largest] / largest * b); // cost proportional to size
            }
            e[b] = Math.max(Math.round(estimate * factor), e[b - 1]);
        }
        return e;
    }

    /**
     * The robust log-scale deviation {@code σ̂} of the samples younger than the profile's age limit,
     * 0 when too few sizes have {@value #TRUSTED_SAMPLES} or more of them.
     */
    public double spread(long now) {
        long[] medians = new long[latencies.length];
        int[] counts = new int[latencies.length];
        for (int s = 1; s < medians.length; s++) {
            medians[s] = recent(s, now, maxAgeNanos, counts);
        }
        return spread(now, maxAgeNanos, medians, counts);
    }

    /**
     * The upper quartile of every recent sample's log-distance from its size's median, over the
     * sizes with {@value #TRUSTED_SAMPLES} or more recent samples, divided by the normal's upper
     * quartile: a lognormal's σ, and robust, since up to a quarter of the samples (stalls, cold
     * batches, a pause of the machine) may be arbitrarily slow without moving it.
     */
    private double spread(long now, long maxAgeNanos, long[] medians, int[] counts) {
        int total = 0;
        for (int s = 1; s < medians.length; s++) {
            if (counts[s] >= TRUSTED_SAMPLES && medians[s] > 0) {
                total += counts[s];
            }
        }
        if (total < 2 * TRUSTED_SAMPLES) {
            return 0;
        }
        double[] residuals = new double[total];
        int n = 0;
        for (int s = 1; s < medians.length; s++) {
            if (counts[s] < TRUSTED_SAMPLES || medians[s] <= 0) {
                continue;
            }
            long[] lat = latencies[s];
            long[] at = recordedAt[s];
            for (int i = 0; i < window; i++) {
                if (at[i] != Long.MIN_VALUE && now - at[i] <= maxAgeNanos) {
                    residuals[n++] = Math.log(Math.max(1, lat[i]) / (double) medians[s]);
                }
            }
        }
        Arrays.sort(residuals, 0, n);
        return Math.max(0, residuals[(3 * n) / 4] / QUARTILE_Z);
    }

    /**
     * How far above the median the estimates of {@link #estimates(int, long)} plan at {@code now}: 1
     * when batches are steady. Dividing an estimate by it gives the median, what a batch costs
     * typically (throughput), as the estimate is what it costs at most three times in four (deadlines).
     */
    public double spreadFactor(long now) {
        return spreadFactor(spread(now));
    }

    /** How much above the median a size spread by {@code sigma} is planned: 1 when steady. */
    private static double spreadFactor(double sigma) {
        return sigma <= STEADY_SIGMA ? 1 : Math.exp(PLANNING_Z * sigma);
    }

    /** Whether a batch of {@code size} has been measured, however long ago. */
    public boolean measured(int size) {
        return size >= 1 && size < latencies.length && latencies[size] != null;
    }

    /** How many batch sizes have a sample younger than the age limit. */
    public int recentSizes(long now) {
        int n = 0;
        for (int s = 1; s < latencies.length; s++) {
            long[] at = recordedAt[s];
            for (int i = 0; at != null && i < window; i++) {
                if (at[i] != Long.MIN_VALUE && now - at[i] <= maxAgeNanos) {
                    n++; // one young sample makes a recent size: no median needed
                    break;
                }
            }
        }
        return n;
    }

    /**
     * Estimates at the bound the other sizes set (see the class comment) each measured size with
     * few samples whose median is far above it. Every bound is an upper one, so an outlier can
     * only loosen another size's bound, never make a fast size look like an outlier.
     */
    private static void boundOutliers(long[] measured, int[] counts) {
        int[] sizes = new int[measured.length];
        int n = 0;
        for (int s = 1; s < measured.length; s++) {
            if (measured[s] >= 0) {
                sizes[n++] = s;
            }
        }
        long[] bounds = new long[n];
        for (int i = 0; i < n; i++) {
            int b = sizes[i];
            bounds[i] = Long.MAX_VALUE;
            for (int j = 0; j < n && counts[b] < TRUSTED_SAMPLES; j++) {
                int s = sizes[j];
                if (s != b) {
                    bounds[i] = Math.min(bounds[i], s > b ? measured[s] : measured[s] * ((b + s - 1) / s));
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (bounds[i] != Long.MAX_VALUE && measured[sizes[i]] > OUTLIER_FACTOR * bounds[i]) {
                measured[sizes[i]] = bounds[i];
            }
        }
    }

    /** The median of a size's samples within {@code maxAgeNanos}, -1 if none; their number into {@code counts}, if given. */
    private long recent(int size, long now, long maxAgeNanos, int[] counts) {
        long[] lat = latencies[size];
        if (lat == null) {
            return -1;
        }
        int n = 0;
        long[] at = recordedAt[size];
        for (int i = 0; i < window; i++) {
            if (at[i] != Long.MIN_VALUE && now - at[i] <= maxAgeNanos) {
                young[n++] = lat[i];
            }
        }
        if (counts != null) {
            counts[size] = n;
        }
        if (n == 0) {
            return -1;
        }
        Arrays.sort(young, 0, n);
        return young[n / 2];
    }

    private static int nextMeasured(long[] measured, int from) {
        for (int s = from; s < measured.length; s++) {
            if (measured[s] >= 0) {
                return s;
            }
        }
        return -1;
    }

    /** The line through (x0, y0) and (x1, y1) at x, with a slope of at least 0. */
    private static long interpolate(int x0, long y0, int x1, long y1, int x) {
        double slope = Math.max(0.0, (double) (y1 - y0) / (x1 - x0));
        return Math.max(0L, Math.round(y0 + slope * (x - x0)));
    }
}
