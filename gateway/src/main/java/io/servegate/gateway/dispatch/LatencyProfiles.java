package io.servegate.gateway.dispatch;

/**
 * The latency a model version's scheduler expects for one query, from its profiles (the
 * container's measured service time per batch size and the transport overhead). Pipelines
 * split their end-to-end SLO among their stages by it when they carry no plan.
 */
@FunctionalInterface
public interface LatencyProfiles {

    /** The expected latency of a batch of one in nanoseconds, or -1 while nothing has been measured. */
    long singleQueryNanos(String model, String version);
}
