package io.servegate.core.fleet;

/**
 * Who schedules one model version: its {@code owner} gateway, the fencing {@code epoch} it was
 * granted at (larger for every grant, fleet-wide), and the gateway it is being handed to, if any.
 * A handed-off version stays its owner's until the owner releases it, so two gateways never
 * schedule it at once.
 *
 * @param pending the member the version moves to once its owner releases it; empty when none
 */
public record Assignment(String owner, long epoch, String pending) {

    public Assignment {
        if (owner == null || owner.isEmpty()) {
            throw new IllegalArgumentException("an assignment needs an owner");
        }
        pending = pending == null ? "" : pending;
    }

    /** Whether the version is on its way to another member. */
    public boolean handingOff() {
        return !pending.isEmpty();
    }
}
