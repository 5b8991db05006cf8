package io.servegate.oip.client;

import java.util.List;

/**
 * The answer to one batch: one output per input, and the time the container reports having
 * spent in the predictor ({@code -1} when the server, e.g. Triton, does not report it).
 */
public record InferResult<Y>(List<Y> outputs, long serviceTimeNanos, String modelName, String modelVersion) {

    public InferResult {
        outputs = List.copyOf(outputs);
    }
}
