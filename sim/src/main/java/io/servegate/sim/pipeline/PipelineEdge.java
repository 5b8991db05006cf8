package io.servegate.sim.pipeline;

/**
 * An edge of a pipeline: stage {@code to} gets {@code from}'s answer. A conditional edge is taken
 * with {@code probability} (InferLine's scale factor: in the gateway a condition on the answer,
 * here a draw), independently of the pipeline's other edges.
 *
 * @param from the upstream stage's name
 * @param to the downstream stage's name
 * @param probability in (0, 1]; 1 for an unconditional edge
 */
public record PipelineEdge(String from, String to, double probability) {

    public PipelineEdge {
        if (from == null || to == null) {
            throw new IllegalArgumentException("an edge needs from and to");
        }
        if (!(probability > 0 && probability <= 1)) {
            throw new IllegalArgumentException("edge " + from + " -> " + to + ": probability must be in (0, 1], got "
                    + probability);
        }
    }
}
