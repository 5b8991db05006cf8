package io.servegate.sim.latency;

import java.util.BitSet;
import java.util.SplittableRandom;

/**
 * An accelerator that is slow on the first batch of each size: {@code base}'s service time, plus
 * {@code coldNanos} the first time a batch of a size runs (cuDNN autotuning, lazy allocation of a
 * new shape's buffers). It remembers which sizes it has run: each replica has its own
 * ({@link #forReplica}).
 *
 * @see LinearLatency for the warm cost
 */
public final class ColdShapeLatency implements LatencyModel {

    private final LatencyModel base;
    private final long coldNanos;
    private final BitSet warm = new BitSet();

    /** {@code base}'s latency, plus {@code coldNanos} on the first batch of each size. */
    public ColdShapeLatency(LatencyModel base, long coldNanos) {
        if (coldNanos < 0) {
            throw new IllegalArgumentException("coldNanos must be >= 0, got " + coldNanos);
        }
        this.base = base;
        this.coldNanos = coldNanos;
    }

    @Override
    public long serviceNanos(int size, SplittableRandom random) {
        long t = base.serviceNanos(size, random);
        if (!warm.get(size)) {
            warm.set(size);
            t += coldNanos;
        }
        return t;
    }

    /** A fresh copy, with every size cold. */
    @Override
    public LatencyModel forReplica() {
        return new ColdShapeLatency(base.forReplica(), coldNanos);
    }

    /** The warm mean: the cold batches are a one-off cost per size. */
    @Override
    public double meanNanos(int size) {
        return base.meanNanos(size);
    }
}
