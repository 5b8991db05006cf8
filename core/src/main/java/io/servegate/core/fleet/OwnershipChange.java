package io.servegate.core.fleet;

/**
 * One step of a rebalancing plan, applied atomically with the others by the fleet store.
 *
 * @param version the model version, as {@code name:version}
 * @param target  the member it goes to; for {@link Kind#DROP} empty
 */
public record OwnershipChange(String version, Kind kind, String target) {

    /** What the step does. */
    public enum Kind {
        /** The version has no live owner: {@code target} owns it now, at a new epoch. */
        GRANT,
        /**
         * The version's live owner hands it to {@code target} once it has released it (its next
         * heartbeat); a target equal to the owner cancels a hand-off in flight.
         */
        HANDOFF,
        /** The version is no longer in the registry: forget its owner. */
        DROP
    }
}
