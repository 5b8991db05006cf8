package io.servegate.gateway.fleet;

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
        public boolean accepts(String model, String version, String from) {
            return true;
        }
    };

    /** This gateway's member name. */
    String self();

    /** Where a query for the version that arrives at this gateway goes. */
    Route route(String model, String version);

    /**
     * Whether this gateway schedules a query for the version that member {@code from} forwarded:
     * it owns the version, or {@code from} is the owner handing the version to it.
     */
    boolean accepts(String model, String version, String from);

    /** Whether this gateway takes the version's decisions (scheduling, autoscaling) now. */
    default boolean owns(String model, String version) {
        return route(model, version) instanceof Route.Local;
    }

    /** The key a version has in the fleet's tables. */
    static String key(String model, String version) {
        return model + ':' + version;
    }
}
