package io.servegate.gateway.registry;

/**
 * One stage of a pipeline: a model (through its own scheduler and the prediction cache) or a
 * combine step over its predecessors' labels.
 *
 * @param name           the stage's name, unique in its pipeline (see {@link Names#requireValid})
 * @param model          the model whose current version answers, or null for a combine stage
 * @param combine        how a combine stage joins its predecessors, or null for a model stage
 * @param input          what the model is given (never null; {@link StageInput#QUERY} by default)
 * @param output         what the stage answers (never null; {@link StageOutput#LABEL} by default)
 * @param deadlineMicros the stage's latency budget from a plan, in microseconds, or 0 when the
 *                       pipeline has no plan (its SLO is then split by profiled latencies)
 */
public record PipelineStage(String name, String model, CombineKind combine, StageInput input, StageOutput output,
        long deadlineMicros) {

    public PipelineStage {
        input = input == null ? StageInput.QUERY : input;
        output = output == null ? StageOutput.LABEL : output;
    }

    /** A model stage given the query's input, with no planned deadline. */
    public static PipelineStage model(String name, String model, StageOutput output) {
        return new PipelineStage(name, model, null, StageInput.QUERY, output, 0);
    }

    /** A combine stage with no planned deadline. */
    public static PipelineStage combine(String name, CombineKind combine) {
        return new PipelineStage(name, null, combine, StageInput.QUERY, StageOutput.LABEL, 0);
    }

    /** Whether this stage combines its predecessors instead of asking a model. */
    public boolean isCombine() {
        return combine != null;
    }
}
