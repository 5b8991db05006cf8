package io.servegate.gateway.registry;

/**
 * An edge of a pipeline's graph: once {@code from} has answered, {@code to} runs, always or only
 * when {@code when} holds on {@code from}'s answer.
 *
 * @param from the source stage's name
 * @param to   the target stage's name
 * @param when the condition, or null for an edge that is always taken
 */
public record PipelineEdge(String from, String to, EdgeCondition when) {

    /** An edge that is always taken. */
    public PipelineEdge(String from, String to) {
        this(from, to, null);
    }
}
