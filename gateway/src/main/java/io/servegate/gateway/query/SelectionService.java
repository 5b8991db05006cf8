package io.servegate.gateway.query;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.cache.EncodedInput;
import io.servegate.core.selection.Combined;
import io.servegate.core.selection.SelectionPolicies;
import io.servegate.core.selection.SelectionPolicy;
import io.servegate.core.selection.WeightedPolicy;
import io.servegate.core.selection.WeightedState;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.gateway.selection.SelectionStateStore;
import io.servegate.oip.client.TensorType;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
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
 *
 * <p>Each prediction is remembered for a while (bounded by bytes and time) with the models that
 * answered it and the probability each was selected with, keyed by app, policy, context and
 * input. Feedback on that input in that context joins the latest such prediction (Clipper
 * §5.2.1): Exp3's importance-weighted loss goes to the model the user's answer came from, and no
 * model is queried. Only feedback on an input with no remembered prediction draws models the way
 * a query would and asks them (through the prediction cache; their current versions).
 *
 * <p>A query asks each selected model through a {@link VersionRouter}: while the model has a
 * rollout, the version the rollout gives the query's user answers and is counted for it. The
 * policy's state and remembered predictions stay keyed by the model, not the version: the policy
 * learns which model serves best, the rollout which version of the model should.
 */
public final class SelectionService {

    private final PredictionService predictions;
    private final SelectionStateStore store;
    private final Duration stateReadTimeout;
    private final LongSupplier clock;
    private final Map<SelectionConfig, SelectionPolicy<?>> policies = new ConcurrentHashMap<>();
    private final Cache<String, Object> lastKnown;
    private final Cache<PlayedKey, Played> played;
    private final int maxContextBytes;
    private final Counter stateFallbacks;
    private final Counter contextsRefused;
    private final Counter joined;
    private final Counter drawn;

    /**
     * @param lastKnownStates how many contexts' last known states to keep
     * @param playedTtl       how long a prediction is remembered for the feedback about it
     * @param playedBytes     about how many bytes of heap the remembered predictions may take
     *                        (their inputs, mostly); 0 remembers none
     * @param maxContextBytes the longest context ({@code uid} or {@code context}) accepted, in UTF-8 bytes
     */
    public SelectionService(PredictionService predictions, SelectionStateStore store, Duration stateReadTimeout,
            long lastKnownStates, Duration playedTtl, long playedBytes, int maxContextBytes, LongSupplier clock,
            MeterRegistry meters) {
        this.predictions = predictions;
        this.store = store;
        this.stateReadTimeout = stateReadTimeout;
        this.clock = clock;
        this.maxContextBytes = maxContextBytes;
        this.lastKnown = Caffeine.newBuilder().maximumSize(lastKnownStates).build();
        this.played = Caffeine.newBuilder().expireAfterWrite(playedTtl).maximumWeight(playedBytes)
                .weigher((PlayedKey k, Played v) -> k.weight() + v.weight()).build();
        this.stateFallbacks = Counter.builder("servegate.selection.state.fallbacks")
                .description("Queries served with the last known or initial selection state because the store failed")
                .register(meters);
        this.contextsRefused = Counter.builder("servegate.selection.contexts.refused")
                .description("Queries and feedback refused because their uid or context was longer than the limit")
                .register(meters);
        FunctionCounter.builder("servegate.selection.states.evicted", store, SelectionStateStore::evictions)
                .description("Per-user selection states evicted to keep an app within its bound on states")
                .register(meters);
        this.joined = Counter.builder("servegate.selection.feedback")
                .description("Feedback, by whether it joined a remembered prediction or had to draw and query models")
                .tag("join", "prediction").register(meters);
        this.drawn = Counter.builder("servegate.selection.feedback")
                .description("Feedback, by whether it joined a remembered prediction or had to draw and query models")
                .tag("join", "queried").register(meters);
    }

    /** The longest context ({@code uid} or {@code context}) accepted, in UTF-8 bytes. */
    public int maxContextBytes() {
        return maxContextBytes;
    }

    /**
     * Whether a context is short enough to have a state of its own; counts the refusal when not.
     *
     * @param context the context as the client sent it, not null
     */
    public boolean acceptsContext(String context) {
        // a UTF-8 byte per char at least, 3 at most: count only where it can matter
        if (context.length() > maxContextBytes
                || (context.length() * 3L > maxContextBytes
                        && context.getBytes(StandardCharsets.UTF_8).length > maxContextBytes)) {
            contextsRefused.increment();
            return false;
        }
        return true;
    }

    /** The policy an app's configuration names; throws IllegalArgumentException for unknown names or parameters. */
    public SelectionPolicy<?> policy(SelectionConfig config) {
        return policies.computeIfAbsent(config, c -> SelectionPolicies.create(c.policy(), c.params()));
    }

    /**
     * Predicts through the app's policy, answering by {@code arrivalNanos + SLO}; each model the
     * policy selects is asked through {@code router} (its current version, or its rollout's choice).
     */
    public Mono<Prediction> predict(Application app, RegistrySnapshot snapshot, String context, TensorType<?> type,
            Object input, long arrivalNanos, VersionRouter router) {
        return predict(policy(app.selection()), app, snapshot, context, type, input, arrivalNanos, router);
    }

    private <S> Mono<Prediction> predict(SelectionPolicy<S> policy, Application app, RegistrySnapshot snapshot,
            String context, TensorType<?> type, Object input, long arrivalNanos, VersionRouter router) {
        long deadline = predictions.deadline(app, arrivalNanos);
        EncodedInput encoded = PredictionService.encode(type, input);
        // the selected models predict once the state is read (from Redis: on another thread), under the request's trace
        RequestTrace request = predictions.tracing().on() ? RequestTrace.current() : null;
        if (request != null) {
            request.attribute("servegate.selection.policy", policy.name());
        }
        Function<S, Mono<Prediction>> answer = state -> {
            List<String> selected = policy.select(state, input, ThreadLocalRandom.current());
            AtomicReference<PredictionException> rejected = new AtomicReference<>();
            return outputs(snapshot, app, selected, type, input, encoded, deadline, rejected, router).flatMap(outputs -> {
                if (outputs.isEmpty() && rejected.get() != null) {
                    // no model answered and one refused the input itself: the client's error, as for one model
                    return predictions.failed(app, rejected.get(), request);
                }
                played.put(new PlayedKey(app.name(), policy.name(), context, encoded),
                        played(policy, state, selected, outputs));
                return Mono.just(answer(policy, app, state, input, outputs, selected));
            });
        };
        return state(policy, app, context)
                .flatMap(request == null ? answer : state -> request.predicting(() -> answer.apply(state)))
                .doOnNext(p -> predictions.record(app, p, arrivalNanos));
    }

    /** The combined answer of the models that answered, or the app's default when none did or it is unsure. */
    private <S> Prediction answer(SelectionPolicy<S> policy, Application app, S state, Object input,
            Map<String, String> outputs, List<String> selected) {
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
    }

    /**
     * Feedback (Clipper §4.2, §5.2.1): joins the label with the latest remembered prediction of
     * the input in this context (the models that answered it and the probability each was
     * selected with), or, when there is none, draws models as a query would and asks them
     * (through the prediction cache). Applies the policy's observe step atomically in the state
     * store (in one step where the store can: {@link SelectionStateStore#observe}) and completes
     * only once it is persisted.
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
        EncodedInput encoded = PredictionService.encode(type, input);
        Played known = played.getIfPresent(new PlayedKey(app.name(), policy.name(), context, encoded));
        Mono<Played> prediction;
        if (known != null) {
            joined.increment();
            prediction = Mono.just(known);
        } else {
            drawn.increment();
            long deadline = clock.getAsLong() + timeout.toNanos();
            prediction = drawState(policy, app, context).flatMap(state -> {
                List<String> selected = policy.select(state, input, ThreadLocalRandom.current());
                return outputs(snapshot, app, selected, type, input, encoded, deadline, new AtomicReference<>(),
                        VersionRouter.CURRENT).map(outputs -> played(policy, state, selected, outputs));
            });
        }
        String name = stateName(app, policy);
        return prediction.flatMap(p -> policy instanceof WeightedPolicy w
                        ? store.observe(name, context, w, models, w.step(input, label, p.outputs(), p.probabilities()))
                        : store.update(name, context, bytes -> {
                            S state = policy.link(bytes == null ? policy.init(models) : policy.codec().decode(bytes),
                                    models);
                            return policy.codec().encode(
                                    policy.observe(state, input, label, p.outputs(), p.probabilities()));
                        }))
                .map(bytes -> {
                    S state = policy.codec().decode(bytes);
                    lastKnown.put(key(app, policy, context), state);
                    return observations(state);
                });
    }

    /** What a prediction selected: the outputs of the selected models that answered, and each one's probability. */
    private static <S> Played played(SelectionPolicy<S> policy, S state, List<String> selected,
            Map<String, String> outputs) {
        Map<String, String> answered = new HashMap<>();
        Map<String, Double> probabilities = new HashMap<>();
        for (String m : selected) {
            String output = outputs.get(m);
            if (output != null) {
                answered.put(m, output);
                probabilities.put(m, policy.probability(state, m));
            }
        }
        return new Played(Map.copyOf(answered), Map.copyOf(probabilities));
    }

    /**
     * The state to draw a feedback's models with when no prediction is remembered: the last one
     * this gateway saw for the context, else the store's. Any state will do, since the draw's
     * probability under it is what the update is weighted with.
     */
    @SuppressWarnings("unchecked")
    private <S> Mono<S> drawState(SelectionPolicy<S> policy, Application app, String context) {
        S last = (S) lastKnown.getIfPresent(key(app, policy, context));
        return last != null ? Mono.just(policy.link(last, app.linkedModels())) : state(policy, app, context);
    }

    /**
     * Each model's output by the deadline, from the version {@code router} chooses; models that
     * fail or are late are simply absent, and the first that rejected the input is kept in
     * {@code rejected}.
     */
    private Mono<Map<String, String>> outputs(RegistrySnapshot snapshot, Application app, List<String> models,
            TensorType<?> type, Object input, EncodedInput encoded, long deadline,
            AtomicReference<PredictionException> rejected, VersionRouter router) {
        return Flux.fromIterable(models)
                .flatMap(m -> snapshot.currentVersion(m)
                        .map(v -> router.predict(m, v, encoded,
                                        version -> predictions.infer(m, version, input, encoded, deadline, app.tenant()),
                                        (version, timeout) -> predictions.infer(m, version, type, input, timeout))
                                .map(p -> Map.entry(m, p.output()))
                                .onErrorResume(PredictionException.class, e -> {
                                    if (e.reason() == DefaultReason.INPUT_REJECTED) {
                                        rejected.compareAndSet(null, e);
                                    }
                                    return Mono.empty();
                                }))
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
        return state instanceof WeightedState w ? w.observations() : 0;
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

    /** One remembered prediction: the selected models that answered, with their selection probabilities. */
    private record Played(Map<String, String> outputs, Map<String, Double> probabilities) {

        int weight() {
            int w = 64;
            for (Map.Entry<String, String> e : outputs.entrySet()) {
                w += 64 + 2 * (e.getKey().length() + e.getValue().length());
            }
            return w;
        }
    }

    /** An app, policy, context and input, the input compared by its encoded bytes (hashed once for the cache too). */
    private record PlayedKey(String app, String policy, String context, EncodedInput input) {

        PlayedKey {
            context = context == null ? "" : context;
        }

        /** About the heap the key holds: the encoded input and the names. */
        int weight() {
            return 96 + input.length() + 2 * (app.length() + policy.length() + context.length());
        }
    }
}
