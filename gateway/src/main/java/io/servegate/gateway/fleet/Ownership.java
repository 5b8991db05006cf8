package io.servegate.gateway.fleet;

import java.util.concurrent.CompletableFuture;

/**
 * Which gateway schedules each model version. A gateway on the in-memory registry is a fleet of
 * one ({@link #SOLO}); gateways sharing a Redis registry each run a {@link FleetMember}.
 */
public interface Ownership {

    /** The fleet of one: every version is scheduled here. */
    Ownership SOLO = new Ownership() {
        @Override
        public String self() {
            return "solo";
        }

        @Override
        public Route route(String model, String version) {
            return new Route.Local(0);
        }

        @Override
        public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
            return CompletableFuture.completedFuture(true);
        }
    };

    /** This gateway's member name. */
    String self();

    /** Where a query for the version that arrives at this gateway goes. */
    Route route(String model, String version);

    /**
     * Whether this gateway schedules a query for the version that another member forwarded with
     * {@code claim}: only if its own view of the fleet says it owns the version now. Nothing in the
     * claim is taken on trust; a claim that names this gateway as the owner at an epoch its view
     * has not passed (a grant or hand-off its heartbeats have not read yet, or a forgery) only makes
     * it read the fleet again ({@link #refresh()}) before it answers.
     */
    CompletableFuture<Boolean> accepts(String model, String version, Claim claim);

    /**
     * Completes after this gateway next reads the fleet (at once for a fleet of one): a query for a
     * version added moments ago, which no member owns yet, waits for it rather than failing.
     */
    default CompletableFuture<Void> nextBeat() {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Completes after this gateway has read the fleet again, soon (another member told it its view
     * is stale); at once for a fleet of one.
     */
    default CompletableFuture<Void> refresh() {
        return nextBeat();
    }

    /** Whether this gateway takes the version's decisions (scheduling, autoscaling) now. */
    default boolean owns(String model, String version) {
        return route(model, version) instanceof Route.Local;
    }

    /** The key a version has in the fleet's tables. */
    static String key(String model, String version) {
        return model + ':' + version;
    }

    /** The model and the version of a {@link #key}, split at its first {@code ':'}. */
    static String[] modelAndVersion(String key) {
        return key.split(":", 2);
    }
}
