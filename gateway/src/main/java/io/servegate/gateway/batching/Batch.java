package io.servegate.gateway.batching;

import java.util.List;

/**
 * One batch handed to a replica by {@link BatchQueue#tryDispatch}.
 *
 * <p>{@link BatchQueue#complete} and {@link BatchQueue#fail} recognise the in-flight batch by
 * identity ({@code ==}), not by this record's value-based {@code equals}.
 *
 * @param items        the queries, earliest deadline first; an unmodifiable, non-empty list
 * @param dispatchedAt the caller's clock ({@code now}, nanoseconds) when the batch was formed
 * @param <T>          the query type
 */
public record Batch<T>(List<T> items, long dispatchedAt) {

    /** Copies {@code items} into an unmodifiable list (null elements are rejected). */
    public Batch {
        items = List.copyOf(items);
    }

    /** Number of queries in the batch. */
    public int size() {
        return items.size();
    }
}
