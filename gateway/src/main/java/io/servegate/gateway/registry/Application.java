package io.servegate.gateway.registry;

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
 */
public record Application(String name, String inputType, String defaultOutput, long latencySloMicros,
                          List<String> linkedModels, SelectionConfig selection) {

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
    }
}
