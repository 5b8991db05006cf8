package io.servegate.core.scheduling;

import java.util.Locale;

/** The scheduling policies a model can be given; the gateway's {@code scheduler} field names one. */
public enum PolicyKind {
    /**
     * Clipper (NSDI'17, §4.3): each replica takes up to its own AIMD (or fixed) batch size when
     * it is idle, with optional delayed batching; deadlines only drop what has already expired.
     */
    CLIPPER,
    /**
     * Clockwork (OSDI'20, §4.3, §5): per-replica latency profiles, early rejection of queries that
     * cannot make it, and the largest batch of the earliest deadlines predicted to finish in time,
     * sent to a replica shortly before it becomes free.
     */
    CLOCKWORK,
    /**
     * Symphony: one candidate batch per model, pruned to the queries that can still make it,
     * deferred until {@code sched_at} so that it grows (non-work-conserving), or sent at once when
     * it holds what arrives during the batch's fixed cost; it goes to the replica free earliest.
     */
    SYMPHONY,
    /**
     * The default: Symphony's pruning always, its deferral only when the arrivals are near or
     * above what the replicas can serve; below that it is work-conserving, as Clipper, and sends
     * what is queued as soon as a replica can take it, leaving the deadlines slack that deferral
     * would spend waiting for a batch that needs no growing.
     */
    ADAPTIVE;

    /** Lower-case name, as configuration and the admin API spell it. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The policy spelled {@code id} (case-insensitive).
     *
     * @throws IllegalArgumentException naming the known policies when {@code id} is none of them
     */
    public static PolicyKind of(String id) {
        for (PolicyKind k : values()) {
            if (k.id().equalsIgnoreCase(id == null ? "" : id.trim())) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown scheduler '" + id + "': expected one of clipper, clockwork, symphony, adaptive");
    }

    SchedulingPolicy create(SchedulerConfig config) {
        return switch (this) {
            case CLIPPER -> new ClipperPolicy(config);
            case CLOCKWORK -> new ClockworkPolicy();
            case SYMPHONY -> new SymphonyPolicy(config, false);
            case ADAPTIVE -> new SymphonyPolicy(config, true);
        };
    }
}
