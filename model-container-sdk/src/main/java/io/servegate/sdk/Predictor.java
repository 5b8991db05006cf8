package io.servegate.sdk;

import io.servegate.oip.client.TensorType;
import java.util.List;

/**
 * A model, as a model builder writes it: one batch in, exactly one output per input out
 * (Clipper, Listing 1).
 *
 * <p>{@link ModelContainer} calls {@link #predictBatch} with at most one batch at a time unless
 * it was configured with a higher concurrency, so implementations need not be thread-safe by
 * default. A thrown exception fails only that batch; the container keeps serving.
 *
 * @param <X> the input type, one of {@link TensorType}'s five Clipper types
 * @param <Y> the output type, likewise
 */
@FunctionalInterface
public interface Predictor<X, Y> {

    /**
     * Predicts a non-empty batch.
     *
     * @param inputs the batch, never empty
     * @return one output per input, in the same order
     * @throws Exception when the batch cannot be predicted; the caller gets the message
     */
    List<Y> predictBatch(List<X> inputs) throws Exception;
}
