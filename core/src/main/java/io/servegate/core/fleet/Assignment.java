package io.servegate.core.fleet;

/**
 * Who schedules one model version: its {@code owner} gateway, the fencing {@code epoch} it was
 * granted at (larger for every grant, fleet-wide), and the gateway it is being handed to, if any.
 * A handed-off version stays its owner's until the owner releases it, so two gateways never
 * schedule it at once.
 *
 * <p>The owner releases a version it hands off only once the member it goes to has said it is
 * ready for it ({@code pendingReady}: it has loaded what scheduling the version needs), so the
 * version is scheduled, by its old owner, until the new one can take it over.
 *
 * @param pending      the member the version moves to once its owner releases it; empty when none
 * @param pendingReady whether {@code pending} said it is ready to schedule the version
 */
public record Assignment(String owner, long epoch, String pending, boolean pendingReady) {

    public Assignment {
        if (owner == null || owner.isEmpty()) {
            throw new IllegalArgumentException("an assignment needs an owner");
        }
        pending = pending == null ? "" : pending;
        pendingReady = pendingReady && !pending.isEmpty();
    }

    /** An assignment whose pending member (if any) has not said it is ready yet. */
    public Assignment(String owner, long epoch, String pending) {
        this(owner, epoch, pending, false);
    }

    /** Whether the version is on its way to another member. */
    public boolean handingOff() {
        return !pending.isEmpty();
    }
}
