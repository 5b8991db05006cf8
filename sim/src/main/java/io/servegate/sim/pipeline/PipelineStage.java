package io.servegate.sim.pipeline;

/**
 * One stage of a pipeline: a model called with the query (or with what the stages before it
 * answered). Each stage has its own scheduler and replicas, as each model of the gateway has.
 *
 * @param name unique in the pipeline; edges name stages by it
 * @param model the model it calls; profiles are looked up by this name
 */
public record PipelineStage(String name, String model) {

    public PipelineStage {
        if (name == null || name.isBlank() || model == null || model.isBlank()) {
            throw new IllegalArgumentException("a stage needs a name and a model");
        }
    }
}
