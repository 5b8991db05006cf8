package io.servegate.gateway.config;

import java.time.Duration;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Before it reports ready and joins a fleet, the gateway exercises its own query path over
 * loopback until a round of calls takes a steady time (docs/deployment.md, "Warm-up").
 */
public record WarmupProperties(
        @DefaultValue("true") boolean enabled,
        /** Ready after this long even if the latency has not settled (a warning is logged). */
        @DefaultValue("30s") Duration maxDuration,
        /**
         * Calls of each kind (HTTP, gRPC, container client, the private pool's queries and, in a
         * fleet, their forwards) one round makes at once.
         */
        @DefaultValue("32") int callsPerRound,
        /** Rounds made at the least. */
        @DefaultValue("20") int minRounds,
        /**
         * Steady: the last three rounds took within this fraction of the fastest of them, and the JIT
         * compilers spent at most this fraction of the last round compiling.
         */
        @DefaultValue("0.25") double tolerance) {
}
