package io.servegate.gateway.registry;

import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import java.util.List;

/**
 * A pipeline app: its prediction is a graph of models under one end-to-end latency SLO. Queried
 * like an app ({@code POST /{name}/predict}); pipelines and apps share one name space. The
 * structural rules are {@link PipelineGraph#of}'s; the registry also checks that every stage's
 * model exists and takes the input the stage is given.
 *
 * @param name             the pipeline's name (see {@link Names#requireValid})
 * @param inputType        Clipper's input type name of the queries
 * @param defaultOutput    the answer when a stage fails or misses its deadline
 * @param latencySloMicros the end-to-end latency SLO in microseconds, {@code > 0}
 * @param stages           the stages (never null; copied)
 * @param edges            the edges (never null; copied)
 * @param priority         its stages' tier among the apps that share their models (never null; default standard)
 * @param weight           its share among the apps of its tier, 1..{@value Tenant#MAX_WEIGHT} (default 1)
 */
public record Pipeline(String name, String inputType, String defaultOutput, long latencySloMicros,
        List<PipelineStage> stages, List<PipelineEdge> edges, Priority priority, int weight) {

    public Pipeline {
        stages = stages == null ? List.of() : List.copyOf(stages);
        edges = edges == null ? List.of() : List.copyOf(edges);
        priority = priority == null ? Priority.STANDARD : priority;
        Application.requireWeight(weight);
    }

    /** A standard pipeline of weight 1. */
    public Pipeline(String name, String inputType, String defaultOutput, long latencySloMicros,
            List<PipelineStage> stages, List<PipelineEdge> edges) {
        this(name, inputType, defaultOutput, latencySloMicros, stages, edges, Priority.STANDARD, 1);
    }

    /**
     * The pipeline as an app with no linked models, for what the query path shares with apps:
     * its deadline, default output, per-app metrics, and its tier and weight as its stages'
     * schedulers see them.
     */
    public Application asApplication() {
        return new Application(name, inputType, defaultOutput, latencySloMicros, List.of(), SelectionConfig.SINGLE,
                Application.OverloadResponse.DEFAULT, null, priority, weight);
    }
}
