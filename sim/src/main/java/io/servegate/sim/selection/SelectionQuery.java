package io.servegate.sim.selection;

/**
 * One query of a {@link SelectionRun}: its input, the context whose selection state it uses
 * (Clipper §5.3, e.g. a user), and the true label its feedback carries.
 *
 * @param input   the query input handed to the policy (may be null; the built-in policies ignore it)
 * @param context the context; queries of one context share a state when states are kept per context
 * @param label   the true output, not null
 */
public record SelectionQuery(Object input, String context, String label) {

    /** @throws IllegalArgumentException if {@code label} is null */
    public SelectionQuery {
        if (label == null) {
            throw new IllegalArgumentException("label must not be null");
        }
    }
}
