package io.servegate.core.rollout;

import java.util.Objects;

/**
 * One entry of a rollout's history.
 *
 * @param atMillis  when, in the clock of whoever decided (epoch milliseconds in the gateway)
 * @param kind      what was done
 * @param fromShare the candidate's share before
 * @param toShare   the candidate's share after
 * @param reason    why, in words (the guard values that decided)
 */
public record Decision(long atMillis, DecisionKind kind, double fromShare, double toShare, String reason) {
    public Decision {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reason, "reason");
    }
}
