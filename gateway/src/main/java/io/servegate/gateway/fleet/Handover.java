package io.servegate.gateway.fleet;

import java.util.Collection;
import java.util.Set;

/**
 * What a member does as versions come to it, while it schedules them and as they leave it, on its
 * heartbeat thread (it may block on Redis): it loads what scheduling a version needs before it
 * takes the version over, publishes what the next owner will need, and at the hand-off itself
 * passes the version on without two members' batches meeting on its replicas.
 */
interface Handover {

    /**
     * Loads what scheduling {@code versions} here needs (the profiles their owners published).
     *
     * @return those of {@code versions} this gateway is ready to schedule now
     */
    Set<String> prepare(Collection<String> versions);

    /** Publishes what this gateway learned about the versions it schedules, for whoever schedules them next. */
    void publish(Collection<String> owned);

    /**
     * Stops scheduling {@code versions}, which this member is about to release to the members
     * they go to: their queued queries are routed after them, and what their replicas still run
     * for this member is left for those members to read ({@link #takeOver}).
     */
    void release(Collection<String> versions);

    /**
     * Prepares to schedule {@code versions}, just come to this member, before it schedules their
     * first query: their replicas are planned busy with what their last owner still runs there.
     */
    void takeOver(Collection<String> versions);
}
