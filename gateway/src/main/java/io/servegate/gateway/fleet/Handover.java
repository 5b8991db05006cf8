package io.servegate.gateway.fleet;

import java.util.Collection;
import java.util.Set;

/**
 * What a member does as versions come to it and while it schedules them, on its heartbeat thread
 * (it may block on Redis): it loads what scheduling a version needs before it takes the version
 * over, and publishes what the next owner will need.
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
}
