package io.servegate.oip.client;

import java.util.List;

/**
 * The answer to one batch: one output per input, and the time the container reports having
 * spent in the predictor ({@code -1} when the server, e.g. Triton, does not report it).
 *
 * @param rowErrors one message per input, {@code ""} for a predicted one ({@link RowErrors}), or
 *                  empty when the container reported none; a failed input's output is a placeholder
 */
public record InferResult<Y>(List<Y> outputs, long serviceTimeNanos, String modelName, String modelVersion,
        List<String> rowErrors) {

    public InferResult {
        outputs = List.copyOf(outputs);
        rowErrors = List.copyOf(rowErrors);
    }

    /** The container's message for input {@code i}, or null when it was predicted. */
    public String rowError(int i) {
        if (rowErrors.isEmpty()) {
            return null;
        }
        String error = rowErrors.get(i);
        return error.isEmpty() ? null : error;
    }
}
