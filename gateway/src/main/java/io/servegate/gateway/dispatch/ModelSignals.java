package io.servegate.gateway.dispatch;

/**
 * A model version's load signals at one instant, read together off its scheduler.
 *
 * @param arrivalRate   queries per second over about the last second
 * @param envelope      the most arrivals in any window of each of
 *                      {@link io.servegate.core.autoscaling.ArrivalEnvelope#WINDOWS_NANOS}, over the last 60 s
 * @param arrived       queries submitted so far
 * @param bad           queries answered late, failed or with a default so far
 * @param idleFraction  the available replicas' mean idle fraction over the last ten seconds; NaN if none
 * @param queued        queries waiting
 * @param ready         replicas taking batches
 */
public record ModelSignals(double arrivalRate, long[] envelope, long arrived, long bad, double idleFraction,
        int queued, int ready) {
}
