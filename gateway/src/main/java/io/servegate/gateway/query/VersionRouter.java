package io.servegate.gateway.query;

import io.servegate.core.cache.EncodedInput;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * Which version of a model answers one of a selection policy's calls, and what the answer counts
 * for: the model's current version, or the version a rollout gives the query's user
 * ({@code gateway.rollout.RolloutTraffic#predict}, the same choice a single-model app's query
 * gets). The policy's own state stays keyed by the model, whichever version answered.
 */
@FunctionalInterface
public interface VersionRouter {

    /** Every model answers with its current version, counted for no rollout. */
    VersionRouter CURRENT = (model, current, encoded, predictWith, shadowWith) -> predictWith.apply(current);

    /**
     * @param current     the model's current version
     * @param encoded     the input as the prediction cache keys it
     * @param predictWith the answer of a given version of the model, failing with {@link PredictionException}
     * @param shadowWith  a version's output by a timeout, outside the app's metrics (a shadow copy)
     * @return the answer of the version chosen
     */
    Mono<Prediction> predict(String model, String current, EncodedInput encoded,
            Function<String, Mono<Prediction>> predictWith, BiFunction<String, Duration, Mono<String>> shadowWith);
}
