package io.servegate.containers.noop;

import io.servegate.sdk.Predictor;
import java.util.Collections;
import java.util.List;

/**
 * Answers the constant string {@code "0"} for every input without looking at it.
 *
 * <p>This is not a model: it exists only so that benchmarks can measure the serving overhead
 * (network, protocol, batching, queueing) with the cost of prediction taken out.
 *
 * @param <X> any input type
 */
public final class NoopPredictor<X> implements Predictor<X, String> {

    /** The output for every input. */
    public static final String OUTPUT = "0";

    @Override
    public List<String> predictBatch(List<X> inputs) {
        return Collections.nCopies(inputs.size(), OUTPUT);
    }
}
