package io.servegate.gateway.registry;

import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import java.util.List;

/**
 * A Clipper application: the endpoint clients query, with its input type, latency objective and
 * the models that serve it.
 *
 * @param name             the application name (see {@link Names#requireValid})
 * @param inputType        Clipper's input type name: {@code ints}, {@code floats}, {@code doubles},
 *                         {@code bytes} or {@code strings}
 * @param defaultOutput    the output returned when no model answers within the SLO
 * @param latencySloMicros the latency service-level objective in microseconds, {@code > 0}
 * @param linkedModels     names of the linked models, in link order (never null; copied)
 * @param selection        how the app chooses among its linked models (never null)
 * @param overloadResponse what a query gets when its model's queue is full (never null)
 * @param rateLimit        the app's query quota; null for none
 * @param priority         its tier among the apps that share its models (never null; default standard)
 * @param weight           its share among the apps of its tier, 1..{@value Tenant#MAX_WEIGHT} (default 1)
 */
public record Application(String name, String inputType, String defaultOutput, long latencySloMicros,
                          List<String> linkedModels, SelectionConfig selection, OverloadResponse overloadResponse,
                          RateLimit rateLimit, Priority priority, int weight) {

    /** How an app answers a query that no replica has room for. */
    public enum OverloadResponse {
        /** The default output, with {@code default: true} and an explanation (Clipper's behaviour). */
        DEFAULT,
        /** HTTP 503 with {@code Retry-After}, so that clients back off instead of reading defaults. */
        REJECT;

        /** The name in the admin API and in Redis. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The value for a wire name; {@code null} is {@link #DEFAULT}. */
        public static OverloadResponse fromWireName(String name) {
            if (name == null) {
                return DEFAULT;
            }
            for (OverloadResponse r : values()) {
                if (r.wireName().equals(name)) {
                    return r;
                }
            }
            throw new IllegalArgumentException("'overload_response' must be 'default' or 'reject', got '" + name + "'");
        }
    }

    /** A standard application of weight 1. */
    public Application(String name, String inputType, String defaultOutput, long latencySloMicros,
            List<String> linkedModels, SelectionConfig selection, OverloadResponse overloadResponse,
            RateLimit rateLimit) {
        this(name, inputType, defaultOutput, latencySloMicros, linkedModels, selection, overloadResponse, rateLimit,
                Priority.STANDARD, 1);
    }

    /** An application without a quota. */
    public Application(String name, String inputType, String defaultOutput, long latencySloMicros,
            List<String> linkedModels, SelectionConfig selection, OverloadResponse overloadResponse) {
        this(name, inputType, defaultOutput, latencySloMicros, linkedModels, selection, overloadResponse, null);
    }

    /** An application answering overload with its default output. */
    public Application(String name, String inputType, String defaultOutput, long latencySloMicros,
            List<String> linkedModels, SelectionConfig selection) {
        this(name, inputType, defaultOutput, latencySloMicros, linkedModels, selection, OverloadResponse.DEFAULT);
    }

    /** An application with Clipper's default selection: its single linked model. */
    public Application(String name, String inputType, String defaultOutput, long latencySloMicros,
            List<String> linkedModels) {
        this(name, inputType, defaultOutput, latencySloMicros, linkedModels, SelectionConfig.SINGLE);
    }

    /**
     * Copies {@code linkedModels} into an immutable list ({@code null} becomes empty).
     *
     * @throws NullPointerException if {@code linkedModels} contains {@code null}
     */
    public Application {
        linkedModels = linkedModels == null ? List.of() : List.copyOf(linkedModels);
        selection = selection == null ? SelectionConfig.SINGLE : selection;
        overloadResponse = overloadResponse == null ? OverloadResponse.DEFAULT : overloadResponse;
        priority = priority == null ? Priority.STANDARD : priority;
        requireWeight(weight);
    }

    /** {@code weight} as an int, if it is one in 1..{@value Tenant#MAX_WEIGHT} (apps and pipelines alike). */
    static int requireWeight(long weight) {
        if (weight < 1 || weight > Tenant.MAX_WEIGHT) {
            throw new IllegalArgumentException("'weight' must be an integer in 1.." + Tenant.MAX_WEIGHT + ", got " + weight);
        }
        return (int) weight;
    }

    /** The same app linked to {@code models}. */
    public Application withLinkedModels(List<String> models) {
        return new Application(name, inputType, defaultOutput, latencySloMicros, models, selection, overloadResponse,
                rateLimit, priority, weight);
    }

    /** What its queries are for, as the schedulers of its models see them. */
    public Tenant tenant() {
        return new Tenant(name, priority, weight);
    }
}
