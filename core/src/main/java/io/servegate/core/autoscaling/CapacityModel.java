package io.servegate.core.autoscaling;

import java.util.function.IntToLongFunction;

/**
 * How many replicas a model needs, from its latency profile {@code ℓ(b)} (service time of a
 * batch of {@code b} plus transport overhead) and its SLO.
 *
 * <p>With batching, Symphony's staggered execution (§4.1, eqs. 2–3): {@code N} replicas running
 * batches of {@code b} staggered by {@code ℓ(b)/N} keep every query within {@code (1 + 1/N)·ℓ(b)},
 * so the largest {@code b} with {@code (1 + 1/N)·ℓ(b) ≤ SLO} gives the most goodput {@code N} can
 * deliver, {@code N·b/ℓ(b)}. Without batching ({@code maxBatch = 1}) the replicas are the servers
 * of an M/D/c queue ({@link MdcQueue}), and the mean latency at a rate tells whether they do.
 * Pure arithmetic on the profile: thread-safe, no state.
 */
public final class CapacityModel {

    private final IntToLongFunction latencyNanos;
    private final long sloNanos;
    private final int maxBatch;

    /**
     * @param latencyNanos {@code ℓ(b)} in nanoseconds, increasing in {@code b}
     * @param sloNanos     the latency objective
     * @param maxBatch     the largest batch the scheduler may send
     */
    public CapacityModel(IntToLongFunction latencyNanos, long sloNanos, int maxBatch) {
        if (sloNanos <= 0 || maxBatch < 1) {
            throw new IllegalArgumentException("slo " + sloNanos + " ns, max batch " + maxBatch);
        }
        this.latencyNanos = latencyNanos;
        this.sloNanos = sloNanos;
        this.maxBatch = maxBatch;
    }

    /** The largest batch {@code N} staggered replicas can run within the SLO (eq. 2); 0 if none can. */
    public int staggeredBatch(int replicas) {
        int best = 0;
        for (int b = 1; b <= maxBatch; b++) {
            if ((1 + 1.0 / replicas) * latencyNanos.applyAsLong(b) <= sloNanos) {
                best = b;
            } else {
                break;
            }
        }
        return best;
    }

    /** The most goodput {@code N} replicas deliver within the SLO, queries per second (eq. 3); 0 if none. */
    public double capacity(int replicas) {
        if (replicas < 1) {
            return 0;
        }
        int b = staggeredBatch(replicas);
        return b == 0 ? 0 : replicas * b * 1e9 / latencyNanos.applyAsLong(b);
    }

    /**
     * The fewest replicas, up to {@code limit}, whose capacity times {@code utilisation} is at
     * least {@code rate}; {@code limit + 1} when even {@code limit} are not enough.
     */
    public int replicasFor(double rate, double utilisation, int limit) {
        for (int n = 1; n <= limit; n++) {
            if (capacity(n) * utilisation >= rate) {
                return n;
            }
        }
        return limit + 1;
    }

    /**
     * The mean latency, in nanoseconds, of {@code replicas} replicas sent one query at a time
     * at {@code rate} queries per second (M/D/c with service {@code ℓ(1)}); +∞ when unstable.
     */
    public double unbatchedMeanLatencyNanos(double rate, int replicas) {
        double d = latencyNanos.applyAsLong(1) / 1e9;
        return MdcQueue.meanLatency(rate, replicas, d) * 1e9;
    }

    /** The latency objective planned for. */
    public long sloNanos() {
        return sloNanos;
    }
}
