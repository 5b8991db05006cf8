package io.servegate.sdk;

import io.servegate.oip.client.TensorType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Predicts a batch so that the rows a predictor raises on fail alone: a batch that raises is
 * split in halves, each predicted again, down to single rows; a row that raises alone is a
 * failed row, every other row keeps its real output. A batch of n with k bad rows costs at most
 * about 2·k·log2(n) more predictor calls, and none while no row raises.
 *
 * <p>A predictor that fails every row of a batch of two or more is taken to be broken, not fed
 * bad rows, and the batch fails as a whole (with the first row's error), unless every row's
 * error was an {@link InvalidInputException}. A batch of one cannot tell the two apart: its
 * error is the row's.
 */
final class RowIsolation {

    /**
     * What became of a batch.
     *
     * @param outputs one per row; a failed row's holds a placeholder of the other outputs' shape
     * @param errors  one per row: {@code ""} for a predicted row, the error's message for a failed one;
     *                empty when every row was predicted
     */
    record Outcome<Y>(List<Y> outputs, List<String> errors) {
    }

    /** A predictor that answered a batch with other than one output per input: a bug, not a bad row. */
    static final class WrongCountException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        WrongCountException(String message) {
            super(message);
        }
    }

    private RowIsolation() {
    }

    /**
     * Predicts {@code batch}, isolating the rows it raises on.
     *
     * @throws WrongCountException when the predictor answers a batch with the wrong number of outputs
     * @throws Exception           the first row's error, when every row failed (see the class comment)
     */
    static <X, Y> Outcome<Y> predict(Predictor<X, Y> predictor, List<X> batch, TensorType<Y> outputType)
            throws Exception {
        List<Y> outputs = new ArrayList<>(Collections.nCopies(batch.size(), null));
        Exception[] errors = new Exception[batch.size()];
        int failed = predict(predictor, batch, 0, batch.size(), outputs, errors);
        if (failed == 0) {
            return new Outcome<>(outputs, List.of());
        }
        if (failed == batch.size() && failed > 1 && !allInvalidInput(errors)) {
            throw errors[0];
        }
        Y sample = null;
        for (Y y : outputs) {
            if (y != null) {
                sample = y;
                break;
            }
        }
        List<String> messages = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            if (errors[i] == null) {
                messages.add("");
            } else {
                messages.add(message(errors[i]));
                outputs.set(i, placeholder(sample, outputType));
            }
        }
        return new Outcome<>(outputs, messages);
    }

    /** Predicts rows [from, to), splitting on an error; returns how many of them failed. */
    private static <X, Y> int predict(Predictor<X, Y> predictor, List<X> batch, int from, int to, List<Y> outputs,
            Exception[] errors) {
        List<Y> predicted;
        try {
            predicted = predictor.predictBatch(batch.subList(from, to));
        } catch (Exception e) {
            if (to - from == 1) {
                errors[from] = e;
                return 1;
            }
            int mid = (from + to) >>> 1;
            return predict(predictor, batch, from, mid, outputs, errors)
                    + predict(predictor, batch, mid, to, outputs, errors);
        }
        if (predicted == null || predicted.size() != to - from) {
            throw new WrongCountException("returned " + (predicted == null ? "null" : predicted.size() + " outputs")
                    + " for a batch of " + (to - from) + "; it must return exactly one output per input");
        }
        for (int i = from; i < to; i++) {
            outputs.set(i, predicted.get(i - from));
        }
        return 0;
    }

    private static boolean allInvalidInput(Exception[] errors) {
        return Arrays.stream(errors).allMatch(e -> e instanceof InvalidInputException);
    }

    /** The row's message: an {@link InvalidInputException}'s own, else the exception's class and message. */
    static String message(Exception e) {
        return e instanceof InvalidInputException && e.getMessage() != null ? e.getMessage() : e.toString();
    }

    /**
     * An output that says nothing, of {@code sample}'s length where there is one (a numeric batch
     * is one [N, d] tensor): "", an empty byte array, zeros.
     */
    @SuppressWarnings("unchecked")
    private static <Y> Y placeholder(Y sample, TensorType<Y> type) {
        int length = sample == null ? 1 : type.length(sample); // no row predicted: any width will do
        Object p = type == TensorType.FLOATS ? new float[length]
                : type == TensorType.DOUBLES ? new double[length]
                : type == TensorType.INTS ? new int[length]
                : type == TensorType.BYTES ? new byte[0]
                : "";
        return (Y) p;
    }
}
