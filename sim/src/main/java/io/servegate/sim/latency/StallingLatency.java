package io.servegate.sim.latency;

import java.util.SplittableRandom;

/**
 * An accelerator that stands still now and then (a driver hiccup, a co-tenant's burst, a pause
 * of the serving process): {@code base}'s service time, but a stall of {@code stallNanos} begins
 * every {@code everyNanos} of simulated time (the first at {@code everyNanos}), and a batch
 * running or starting during one finishes that much later. The same schedule for every replica,
 * as a stall of the host would be.
 */
public final class StallingLatency implements LatencyModel {

    private final LatencyModel base;
    private final long everyNanos;
    private final long stallNanos;

    /** {@code base}'s latency, standing still {@code stallNanos} every {@code everyNanos}. */
    public StallingLatency(LatencyModel base, long everyNanos, long stallNanos) {
        if (everyNanos <= 0 || stallNanos < 0 || stallNanos >= everyNanos) {
            throw new IllegalArgumentException("stalls need a positive period longer than the stall, got every "
                    + everyNanos + " ns, stall " + stallNanos + " ns");
        }
        this.base = base;
        this.everyNanos = everyNanos;
        this.stallNanos = stallNanos;
    }

    @Override
    public long serviceNanos(int size, SplittableRandom random) {
        return base.serviceNanos(size, random);
    }

    @Override
    public double meanNanos(int size) {
        return base.meanNanos(size);
    }

    @Override
    public LatencyModel forReplica() {
        LatencyModel b = base.forReplica();
        return b == base ? this : new StallingLatency(b, everyNanos, stallNanos);
    }

    /** The stalls met on the way, including one under way at {@code startNanos}, add their remaining length. */
    @Override
    public long finishNanos(long startNanos, long workNanos) {
        long t = Math.max(0, startNanos);
        long left = workNanos;
        while (true) {
            long k = t / everyNanos;
            if (k >= 1 && t < k * everyNanos + stallNanos) {
                t = k * everyNanos + stallNanos;
            }
            long next = (t / everyNanos + 1) * everyNanos;
            if (t + left <= next) {
                return t + left;
            }
            left -= next - t;
            t = next;
        }
    }
}
