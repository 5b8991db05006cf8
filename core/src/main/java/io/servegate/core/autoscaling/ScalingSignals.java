package io.servegate.core.autoscaling;

import io.servegate.core.scheduling.ModelScheduler;

/**
 * What an {@link Autoscaler} looks at, read off one model version's scheduler at one instant.
 *
 * @param atNanos       when it was read
 * @param replicas      replicas asked for (those starting included)
 * @param ready         replicas taking batches
 * @param arrived       queries submitted so far
 * @param bad           queries answered late or with a default so far
 * @param idleFraction  the ready replicas' mean idle fraction over the last ten seconds; NaN if none
 * @param queued        queries waiting
 * @param recentRate    the busiest rate of the last {@value #RECENT_SECONDS} s, from the envelope
 * @param recentWindow  the window length that rate was seen over, nanoseconds
 * @param sustainedRate the busiest rate of the last cooldown, from the envelope
 * @param capacity      the capacity model on the current profile and the autoscaler's SLO (the
 *                      scheduler's unless its configuration names one); null while nothing is measured
 */
public record ScalingSignals(long atNanos, int replicas, int ready, long arrived, long bad, double idleFraction,
        int queued, double recentRate, long recentWindow, double sustainedRate, CapacityModel capacity) {

    /** How far back scale-up decisions look. */
    public static final int RECENT_SECONDS = 2;
    /** The longest window the rates are taken over (InferLine's 5 s). */
    static final long LONGEST_WINDOW_NANOS = 5_000_000_000L;
    /**
     * The shortest: bursts shorter than half a second are the queue's to absorb and the
     * scheduler's to shed, and at the scheduler they show the gateway's own stalls (a GC pause,
     * a starved event loop releasing a clump of requests) as much as the traffic.
     */
    static final long SHORTEST_WINDOW_NANOS = 500_000_000L;

    /**
     * Reads the signals of {@code scheduler}, which the caller serialises as it does its events.
     *
     * @param replicas replicas asked for, as the caller knows it
     * @param config   the autoscaler's: the sustained rate covers its cooldown, the capacity model
     *                 plans for its SLO
     */
    public static ScalingSignals read(ModelScheduler<?> scheduler, int replicas, AutoscalerConfig config, long now) {
        ArrivalEnvelope envelope = scheduler.envelope();
        long[] recent = busiestRate(envelope, RECENT_SECONDS * 1_000_000_000L, now);
        // windows of up to 5 s ending within the lookback: together they span the cooldown
        long lookback = Math.max(1_000_000_000L,
                Math.min(ArrivalEnvelope.MAX_LOOKBACK_NANOS, config.cooldownNanos() - LONGEST_WINDOW_NANOS));
        long[] sustained = busiestRate(envelope, lookback, now);
        long[] latency = scheduler.latencyByBatchNanos();
        CapacityModel capacity = latency == null ? null
                : new CapacityModel(b -> latency[b - 1], config.sloNanosOr(scheduler.sloNanos()), latency.length);
        return new ScalingSignals(now, replicas, scheduler.availableReplicas(), scheduler.arrived(),
                scheduler.bad(), scheduler.idleFraction(now), scheduler.queued(), Double.longBitsToDouble(recent[0]),
                recent[1], Double.longBitsToDouble(sustained[0]), capacity);
    }

    /**
     * A model version with no scheduler (no replica registered): nothing is known but the replicas
     * asked for, so only the bounds apply.
     */
    public static ScalingSignals none(int replicas, long now) {
        return new ScalingSignals(now, replicas, 0, 0, 0, Double.NaN, 0, 0, ArrivalEnvelope.WINDOWS_NANOS[0], 0, null);
    }

    /**
     * The highest rate over windows of 0.5 s to 5 s ending within {@code lookback}, each window's
     * count taken as the expected maximum of Poisson counts over the look-back,
     * {@code rT + z·√(rT)} with {@code z = √(2 ln(1 + lookback/T))}, and solved for {@code r}:
     * steady Poisson traffic reads as its rate on every window, a burst or a rise reads higher
     * on the windows it fills. Returns the rate's bits and its window.
     */
    static long[] busiestRate(ArrivalEnvelope envelope, long lookback, long now) {
        double best = 0;
        long window = SHORTEST_WINDOW_NANOS;
        for (long t : ArrivalEnvelope.WINDOWS_NANOS) {
            if (t < SHORTEST_WINDOW_NANOS) {
                continue;
            }
            if (t > LONGEST_WINDOW_NANOS) {
                break;
            }
            double rate = poissonRate(envelope.maxArrivals(t, lookback, now), t, lookback);
            if (rate > best) {
                best = rate;
                window = t;
            }
        }
        return new long[] {Double.doubleToLongBits(best), window};
    }

    static double poissonRate(long count, long windowNanos, long lookbackNanos) {
        double z = Math.sqrt(2 * Math.log(1 + (double) lookbackNanos / windowNanos));
        double x = (-z + Math.sqrt(z * z + 4.0 * count)) / 2;
        return x * x / (windowNanos / 1e9);
    }
}
