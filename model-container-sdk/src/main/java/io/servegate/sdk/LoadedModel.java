package io.servegate.sdk;

import java.util.Objects;

/**
 * A model that a {@link ModelRepository} has loaded: its predictor, the vector length its
 * numeric inputs must have (-1 for any), and what to close when it is unloaded.
 *
 * @param <X> input type
 * @param <Y> output type
 */
public record LoadedModel<X, Y>(Predictor<X, Y> predictor, int inputLength, AutoCloseable resources) {

    public LoadedModel {
        Objects.requireNonNull(predictor, "predictor");
        Objects.requireNonNull(resources, "resources");
    }
}
