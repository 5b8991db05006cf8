package io.servegate.containers.emulated;

import io.servegate.sdk.InvalidInputException;
import io.servegate.sdk.Predictor;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A predictor that predicts a batch and then raises on it if any row holds one value, as a model
 * that rejects some inputs only once it has run them (a corrupt image, a value out of its
 * domain): the emulated container's {@code --fault raise-on-value=V}. A numeric row holds V when
 * one of its elements equals it; a string or bytes row when it contains V's text.
 */
final class PoisonedPredictor<X> implements Predictor<X, String> {

    private final Predictor<X, String> model;
    private final String value;
    private final double number;

    PoisonedPredictor(Predictor<X, String> model, String value) {
        this.model = model;
        this.value = value;
        double parsed;
        try {
            parsed = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            parsed = Double.NaN; // matches no element
        }
        this.number = parsed;
    }

    @Override
    public List<String> predictBatch(List<X> inputs) throws Exception {
        List<String> outputs = model.predictBatch(inputs);
        for (X input : inputs) {
            if (holds(input)) {
                throw new InvalidInputException("the model rejects inputs holding " + value);
            }
        }
        return outputs;
    }

    boolean holds(X input) {
        if (input instanceof float[] v) {
            for (float f : v) {
                if (f == number) {
                    return true;
                }
            }
        } else if (input instanceof double[] v) {
            for (double d : v) {
                if (d == number) {
                    return true;
                }
            }
        } else if (input instanceof int[] v) {
            for (int i : v) {
                if (i == number) {
                    return true;
                }
            }
        } else if (input instanceof String s) {
            return s.contains(value);
        } else if (input instanceof byte[] b) {
            return new String(b, StandardCharsets.ISO_8859_1).contains(value);
        }
        return false;
    }
}
