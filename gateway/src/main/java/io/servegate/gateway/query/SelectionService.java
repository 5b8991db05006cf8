package io.servegate.gateway.query;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.gateway.rpc.DefaultReason;
import io.servegate.gateway.rpc.PredictionException;
import io.servegate.core.selection.Combined;
import io.servegate.core.selection.SelectionPolicies;
import io.servegate.core.selection.SelectionPolicy;
import io.servegate.gateway.selection.SelectionStateStore;
import io.servegate.sdk.TensorType;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The model selection layer on the query path (Clipper §5): loads the app's policy state for
 * the query's context, queries the models the policy selects, combines whatever has answered by
 * the deadline (straggler mitigation, §5.2.2), applies the app's confidence threshold, and turns
 * feedback into policy updates that are persisted before they are acknowledged.
 *
 * <p>States are read from the {@link SelectionStateStore} on every query; when the store is
 * slow or unreachable the last state this gateway saw (or the initial one) is used, so
 * predictions keep flowing while feedback fails loudly.
 */
public final class SelectionService {

    private final PredictionService predictions;
    private final SelectionStateStore store;
    private final Duration stateReadTimeout;
    private final LongSupplier clock;
    private final Map<SelectionConfig, SelectionPolicy<?>> policies = new ConcurrentHashMap<>();
    private final Cache<String, Object> lastKnown;
    private final Counter stateFallbacks;

    public SelectionService(PredictionService predictions, SelectionStateStore store, Duration stateReadTimeout,
            long lastKnownStates, LongSupplier clock, MeterRegistry meters) {
        this.predictions = predictions;
        this.store = store;
        this.stateReadTimeout = stateReadTimeout;
        this.clock = clock;
        this.lastKnown = Caffeine.newBuilder().maximumSize(lastKnownStates).build();
        this.stateFallbacks = Counter.builder("servegate.selection.state.fallbacks")
                .description("Queries served with the last known or initial selection state because the store failed")
                .register(meters);
    }

    /** The policy an app's configuration names; throws IllegalArgumentException for unknown names or parameters. */
    public SelectionPolicy<?> policy(SelectionConfig config) {
        return policies.computeIfAbsent(config, c -> SelectionPolicies.create(c.policy(), c.params()));
    }

    /** Predicts through the app's policy, answering by {@code arrivalNanos + SLO}. */
    public Mono<Prediction> predict(Application app, RegistrySnapshot snapshot, String context, TensorType<?> type,
            Object input, long arrivalNanos) {
        return predict(policy(app.selection()), app, snapshot, context, type, input, arrivalNanos);
    }

    private <S> Mono<Prediction> predict(SelectionPolicy<S> policy, Application app, RegistrySnapshot snapshot,
            String context, TensorType<?> type, Object input, long arrivalNanos) {
        long deadline = predictions.deadline(app, arrivalNanos);
        return state(policy, app, context).flatMap(state -> {
            List<String> selected = policy.select(state, input, ThreadLocalRandom.current());
            return outputs(snapshot, selected, type, input, deadline).map(outputs -> {
                Optional<Combined> combined = policy.combine(state, input, outputs, selected);
                if (combined.isEmpty()) {
                    return predictions.defaultFor(app, new PredictionException(DefaultReason.NO_ANSWER,
                            "0 of " + selected.size() + " models")).withEnsemble(0, 0, selected.size());
                }
                Combined c = combined.get();
                double threshold = app.selection().confidenceThreshold();
                if (c.confidence() < threshold) {
                    return predictions.defaultFor(app, new PredictionException(DefaultReason.LOW_CONFIDENCE,
                            String.format(Locale.ROOT, "%.3f < %.3f", c.confidence(), threshold)))
                            .withEnsemble(c.confidence(), c.answered(), c.selected());
                }
                return Prediction.of(c.output()).withEnsemble(c.confidence(), c.answered(), c.selected());
            });
        }).doOnNext(p -> predictions.record(app, p, arrivalNanos));
    }

    /**
     * Feedback (Clipper §4.2, §5): joins the label with each linked model's prediction for the
     * input (from the prediction cache, querying the model on a miss), applies the policy's
     * observe step atomically in the state store, and completes only once it is persisted.
     *
     * @return the number of observations the state has seen
     */
    public Mono<Long> observe(Application app, RegistrySnapshot snapshot, String context, TensorType<?> type,
            Object input, String label, Duration timeout) {
        return observe(policy(app.selection()), app, snapshot, context, type, input, label, timeout);
    }

    private <S> Mono<Long> observe(SelectionPolicy<S> policy, Application app, RegistrySnapshot snapshot,
            String context, TensorType<?> type, Object input, String label, Duration timeout) {
        List<String> models = app.linkedModels();
        return outputs(snapshot, models, type, input, clock.getAsLong() + timeout.toNanos())
                .flatMap(outputs -> store.update(stateName(app, policy), context, bytes -> {
                    S state = policy.link(bytes == null ? policy.init(models) : policy.codec().decode(bytes), models);
                    // bandit feedback: the loss of the models the policy would query now (Exp3: one, Exp4: all)
                    Map<String, String> seen = new HashMap<>();
                    for (String m : policy.select(state, input, ThreadLocalRandom.current())) {
                        if (outputs.containsKey(m)) {
                            seen.put(m, outputs.get(m));
                        }
                    }
                    return policy.codec().encode(policy.observe(state, input, label, seen));
                }))
                .map(bytes -> {
                    S state = policy.codec().decode(bytes);
                    lastKnown.put(key(app, policy, context), state);
                    return observations(state);
                });
    }

    /** Each model's output by the deadline; models that fail or are late are simply absent. */
    private Mono<Map<String, String>> outputs(RegistrySnapshot snapshot, List<String> models, TensorType<?> type,
            Object input, long deadline) {
        return Flux.fromIterable(models)
                .flatMap(m -> snapshot.currentVersion(m)
                        .map(v -> predictions.infer(m, v, type, input, deadline)
                                .map(p -> Map.entry(m, p.output()))
                                .onErrorResume(PredictionException.class, e -> Mono.empty()))
                        .orElse(Mono.empty()))
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    @SuppressWarnings("unchecked")
    private <S> Mono<S> state(SelectionPolicy<S> policy, Application app, String context) {
        String key = key(app, policy, context);
        return store.get(stateName(app, policy), context)
                .timeout(stateReadTimeout)
                .map(v -> policy.codec().decode(v.state()))
                .doOnNext(s -> lastKnown.put(key, s))
                .onErrorResume(e -> {
                    stateFallbacks.increment();
                    return Mono.justOrEmpty((S) lastKnown.getIfPresent(key));
                })
                .switchIfEmpty(Mono.fromSupplier(() -> policy.init(app.linkedModels())))
                .map(s -> policy.link(s, app.linkedModels()));
    }

    private static long observations(Object state) {
        return state instanceof io.servegate.core.selection.WeightedState w ? w.observations() : 0;
    }

    /**
     * States are kept per app and policy, so an app re-created with another policy starts afresh
     * instead of failing to decode the old policy's state.
     */
    private static String stateName(Application app, SelectionPolicy<?> policy) {
        return app.name() + "/" + policy.name();
    }

    private static String key(Application app, SelectionPolicy<?> policy, String context) {
        return app.name() + '\u0000' + policy.name() + '\u0000' + (context == null ? "" : context);
    }
}
