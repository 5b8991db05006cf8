package io.servegate.sim.selection;

/**
 * The feedback model of a {@link SelectionRun}: what each linked model answers to each query.
 * Implementations must be pure functions of their arguments, so every policy and every static
 * model replayed over the same queries sees the very same outputs.
 *
 * @see RecordedOutputs
 * @see SyntheticOutputs
 */
@FunctionalInterface
public interface ModelOutputs {

    /**
     * @param index the query's position in the run, from 0
     * @param query the query
     * @param model a linked model
     * @return the model's output, or null when it does not answer (a straggler or failure)
     */
    String output(int index, SelectionQuery query, String model);
}
