package io.servegate.gateway.rollout;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.servegate.core.cache.EncodedInput;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.Prediction;
import io.servegate.gateway.query.PredictionException;
import io.servegate.gateway.registry.Application;
import java.time.Duration;
import java.util.Collection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The rollouts on the query path: which version of a model answers a query while the model has a
 * rollout in progress, what the answer counts for the guards, and the join of feedback with the
 * answer it is about. Every way a model is queried goes through {@link #route}: a single-model
 * app's query, a selection policy's (exp3, exp4) call of one of its models, and an Open Inference
 * Protocol request that names no version.
 *
 * <p>Routing reads a map of the running or paused rollouts, replaced whole when the store is read
 * ({@link RolloutDecisions}, every interval) or an admin call changes one, so a query does one
 * hash lookup and, on a rollout's model, one hash of its user key. A user key is the query's
 * {@code uid} (as {@code uid:<uid>}, or {@code ctx:<context>}; an OIP request's {@code id} as
 * {@code id:<id>}); the candidate serves it while its point is below the step's share
 * ({@link Rollout#routesToCandidate}), so every gateway routes a user alike and a user stays on
 * the candidate as the share grows. A query without one is drawn at random with the step's share.
 * A rollout routes only while its baseline is still the model's current version (a
 * {@code set_model_version} meanwhile takes the model out of it).
 *
 * <p>Each answer of a rollout's model to an app is remembered for a while, bounded by bytes and
 * time (app, model, user key and input → rollout, version, output), so that {@code /{app}/update}
 * can charge the label's loss to the version that answered.
 *
 * <p>While a rollout's candidate warms up ({@link io.servegate.core.rollout.Guards#warmupQueries}),
 * every user gets the baseline's answer and any answered query may be copied to the candidate as
 * a shadow copy is, with {@value #WARMUP_DEADLINE_SLOS} SLOs to answer; a copy the candidate
 * answers (or its container fails) counts only as one warm-up, and nothing of it is compared or
 * joined with feedback.
 *
 * <p>While a model has a shadow rollout, every user gets the baseline's answer; once it is
 * answered, a query whose user is in the rollout's fraction is also copied to the candidate if
 * {@link ShadowAdmission} lets it (room in the candidate's scheduler, a bounded number in
 * flight), off the query's thread and never awaited by its answer. The copy has the app's SLO
 * from when it is sent; its outcome counts as the candidate's query, its output is compared with
 * the baseline's (agreement), and feedback on that input charges both versions' losses.
 */
public final class RolloutTraffic {

    /**
     * A warm-up copy's deadline in SLOs: a cold candidate's first batches may take several SLOs,
     * and a copy is there to warm it, not to judge it.
     */
    static final int WARMUP_DEADLINE_SLOS = 10;

    private final RolloutCounters counters;
    private final LongSupplier clock;
    private final ShadowAdmission shadows;
    private final Cache<PlayedKey, Played> played;
    private volatile Map<String, Rollout> routing = Map.of();

    /**
     * @param playedTtl   how long an answer is remembered for the feedback about it
     * @param playedBytes about how many bytes of heap the remembered answers may take; 0 remembers none
     * @param shadows     which shadow copies may be sent
     */
    public RolloutTraffic(RolloutCounters counters, LongSupplier clock, Duration playedTtl, long playedBytes,
            ShadowAdmission shadows) {
        this.counters = counters;
        this.clock = clock;
        this.shadows = shadows;
        // evicting on the writing thread keeps the bound at once, not after a background pass
        this.played = Caffeine.newBuilder().executor(Runnable::run).expireAfterWrite(playedTtl)
                .maximumWeight(playedBytes)
                .weigher((PlayedKey k, Played v) -> k.weight() + v.weight()).build();
    }

    /** Routes by these rollouts from now on (the store's, all of them). */
    public synchronized void update(Collection<Rollout> rollouts) {
        Map<String, Rollout> next = new HashMap<>();
        for (Rollout r : rollouts) {
            if (routes(r)) {
                next.put(r.model(), r);
            }
        }
        routing = Map.copyOf(next);
    }

    /** Routes by {@code r} for its model from now on (an admin call or a decision changed it here). */
    public synchronized void update(Rollout r) {
        Map<String, Rollout> next = new HashMap<>(routing);
        if (routes(r)) {
            next.put(r.model(), r);
        } else {
            next.remove(r.model());
        }
        routing = Map.copyOf(next);
    }

    /** @return the rollout that routes the model's queries here, or null */
    Rollout routing(String model) {
        return routing.get(model);
    }

    private static boolean routes(Rollout r) {
        return !r.status().isFinal();
    }

    /**
     * The one choice of a version for a query of {@code model} by a rollout: while the model's
     * canary or shadow routes and its baseline is still {@code current}, the user is drawn by its
     * key ({@link Rollout#routesToCandidate}), or at random with the step's share when it has none.
     *
     * @param userKey {@code uid:<uid>}, {@code ctx:<context>}, {@code id:<request id>} or null
     * @return the route, or null when no rollout routes the model's queries
     */
    public RolloutRoute route(String model, String current, String userKey) {
        Rollout r = model == null ? null : routing.get(model);
        if (r == null || !r.baseline().equals(current)) {
            return null;
        }
        boolean drawn = r.warming() || (userKey != null ? r.routesToCandidate(userKey)
                : ThreadLocalRandom.current().nextDouble() < r.share());
        return new RolloutRoute(r, userKey, drawn);
    }

    /**
     * Answers one query of an app's model (a single-model app's query, or a selection policy's
     * call of one of its models): by {@link #route} and {@link #answer} while the model has a
     * rollout that routes, else with {@code current}, counted for nothing.
     *
     * @param userKey     {@code uid:<uid>}, {@code ctx:<context>} or null
     * @param input       the input as the prediction cache keys it, encoded only for a rollout's model
     * @param predictWith the answer of a given version of the model: a prediction, a default or a {@link PredictionException}
     * @param shadowWith  a version's output by a timeout, outside the app's metrics (a shadow copy)
     */
    public Mono<Prediction> predict(Application app, String model, String current, String userKey,
            Supplier<EncodedInput> input, long arrivalNanos, Function<String, Mono<Prediction>> predictWith,
            BiFunction<String, Duration, Mono<String>> shadowWith) {
        RolloutRoute route = route(model, current, userKey);
        return route == null ? predictWith.apply(current)
                : answer(route, app.name(), input, arrivalNanos,
                        TimeUnit.MICROSECONDS.toNanos(app.latencySloMicros()), predictWith, shadowWith);
    }

    /**
     * Answers a pipeline stage's call of {@code model} by {@link #route} and {@link #answer} while
     * the model has a rollout that routes, else with {@code current}. Pipelines take no feedback,
     * so nothing is remembered; the pipeline's SLO from the query's arrival stands for the app's
     * (a stage that missed its own deadline failed, which is a miss too).
     *
     * @param userKey {@code uid:<uid>}, {@code ctx:<context>} or null
     */
    public Mono<Prediction> predictStage(String model, String current, String userKey, long arrivalNanos,
            long sloNanos, Function<String, Mono<Prediction>> predictWith,
            BiFunction<String, Duration, Mono<String>> shadowWith) {
        RolloutRoute route = route(model, current, userKey);
        return route == null ? predictWith.apply(current)
                : answer(route, null, null, arrivalNanos, sloNanos, predictWith, shadowWith);
    }

    /**
     * Answers one query routed by {@code route} with its version, on every path; counts the outcome for the
     * guards (later than {@code sloNanos} after arrival, a default or a failure is a miss; the
     * container's failure an error); remembers the answer for the app's feedback; and in a shadow
     * sends the candidate a copy if {@link ShadowAdmission} lets it.
     *
     * @param app         the app whose feedback may be about the answer, or null (nothing remembered)
     * @param input       the input as the prediction cache keys it, read only when {@code app} is given
     * @param predictWith the answer of a given version, a default or a {@link PredictionException}
     * @param shadowWith  a version's output by a timeout, outside the app's metrics (a shadow copy)
     */
    private Mono<Prediction> answer(RolloutRoute route, String app, Supplier<EncodedInput> input, long arrivalNanos,
            long sloNanos, Function<String, Mono<Prediction>> predictWith,
            BiFunction<String, Duration, Mono<String>> shadowWith) {
        Rollout r = route.rollout();
        boolean candidate = route.servedByCandidate();
        return predictWith.apply(route.version()).doOnNext(p -> {
            boolean afterSlo = clock.getAsLong() - arrivalNanos > sloNanos;
            counters.query(r.id(), candidate, p.isDefault() || afterSlo, isError(p.reason()));
            if (p.isDefault()) {
                return;
            }
            PlayedKey key = app == null ? null : new PlayedKey(app, r.model(), route.userKey(), input.get());
            if (key != null) {
                played.put(key, new Played(r.id(), candidate, p.output(), null));
            }
            if (route.copied() && shadows.tryAcquire(r)) {
                copy(r, key, p.output(), Duration.ofNanos(sloNanos), shadowWith);
            }
        }).doOnError(PredictionException.class, e -> counters.query(r.id(), candidate, true, isError(e.reason())));
    }

    /**
     * Answers one row of an Open Inference Protocol request routed by {@code route}: there is no
     * app, so nothing is remembered for feedback, and the request's timeout stands for the SLO (a
     * failure, the timeout's included, is a miss).
     *
     * @param inferWith a version's output by a timeout, failing with {@link PredictionException}
     */
    public Mono<String> infer(RolloutRoute route, Duration timeout,
            BiFunction<String, Duration, Mono<String>> inferWith) {
        return answer(route, null, null, clock.getAsLong(), timeout.toNanos(),
                v -> inferWith.apply(v, timeout).map(Prediction::of), inferWith).map(Prediction::output);
    }

    /**
     * Sends a shadow copy to the candidate and counts what comes back; the user's answer does not
     * wait for it. {@code key} (null: none) is the remembered answer that the copy's output joins.
     */
    private void copy(Rollout r, PlayedKey key, String baselineOutput, Duration slo,
            BiFunction<String, Duration, Mono<String>> shadowWith) {
        long sent = clock.getAsLong();
        Duration deadline = r.warming() ? slo.multipliedBy(WARMUP_DEADLINE_SLOS) : slo;
        Mono<String> copy = Mono.defer(() -> shadowWith.apply(r.candidate(), deadline))
                .subscribeOn(Schedulers.parallel()).doFinally(s -> shadows.release());
        if (r.warming()) {
            copy.subscribe(out -> counters.warmup(r.id()), e -> {
                if (e instanceof PredictionException pe && ranInContainer(pe.reason())) {
                    counters.warmup(r.id());
                }
            });
            return;
        }
        copy.subscribe(out -> {
            counters.query(r.id(), true, clock.getAsLong() - sent > slo.toNanos(), false);
            counters.comparison(r.id(), out.equals(baselineOutput));
            if (key != null) {
                played.asMap().computeIfPresent(key, (k, v) -> v.rolloutId().equals(r.id())
                        ? new Played(v.rolloutId(), false, v.output(), out) : v);
            }
        }, e -> counters.query(r.id(), true, true, !(e instanceof PredictionException pe) || isError(pe.reason())));
    }

    /**
     * Failures of a warm-up copy that are the candidate's own (its container failed the batch, so
     * often that its circuit opened, or rejected the input): they end a warm-up like answers, so
     * that a failing candidate meets its error guard at the first step. A copy that timed out or
     * was dropped by the candidate's scheduler warmed nothing, and a candidate that answers
     * nothing stays warming (its users on the baseline) until an operator aborts it.
     */
    private static boolean ranInContainer(DefaultReason reason) {
        return isError(reason) || reason == DefaultReason.INPUT_REJECTED;
    }

    /** Failures of the version itself: its container failed the batch, or failed so often that its circuit opened. */
    private static boolean isError(DefaultReason reason) {
        return reason == DefaultReason.CONTAINER_ERROR || reason == DefaultReason.CIRCUIT_OPEN;
    }

    /**
     * Joins a feedback label with the latest remembered answer of the input for this app and user
     * key by each of the app's models that has a rollout routing (one for a single-model app; any
     * a selection policy called), while that answer's rollout still routes, and counts its loss
     * for the version that gave it. In shadow mode a label counts only for an input the candidate
     * answered too, for both versions (their losses on the same inputs).
     *
     * @return the joins, empty when no such answer is remembered
     * @throws IllegalArgumentException for a label the rollout's task cannot measure (a regression label that is not a number)
     */
    public List<Joined> feedback(Application app, String userKey, EncodedInput input, String label) {
        List<Joined> joins = new ArrayList<>(1);
        for (String model : app.linkedModels()) {
            Rollout r = routing.get(model);
            Played p = r == null ? null : played.getIfPresent(new PlayedKey(app.name(), model, userKey, input));
            if (p == null || !r.id().equals(p.rolloutId())) {
                continue;
            }
            double loss = r.task().loss(p.output(), label, r.scale());
            if (r.mode() == RolloutMode.SHADOW) {
                if (p.shadowOutput() == null) {
                    continue;
                }
                counters.feedback(r.id(), true, r.task().loss(p.shadowOutput(), label, r.scale()));
            }
            counters.feedback(r.id(), p.candidate(), loss);
            joins.add(new Joined(model, r.id(), p.candidate() ? r.candidate() : r.baseline(), loss));
        }
        return joins;
    }

    /**
     * A feedback label charged to a rollout's version.
     *
     * @param model     the rollout's model
     * @param rolloutId the rollout
     * @param version   the version whose answer it was about
     * @param loss      the label's loss on that answer
     */
    public record Joined(String model, String rolloutId, String version, double loss) {
    }

    /** An answer, and in shadow mode the candidate's output on the same input once its copy answered (else null). */
    private record Played(String rolloutId, boolean candidate, String output, String shadowOutput) {

        int weight() {
            return 96 + 2 * (rolloutId.length() + output.length()
                    + (shadowOutput == null ? 0 : shadowOutput.length()));
        }
    }

    /** An app, model, user key and input, the input compared by its encoded bytes. */
    private record PlayedKey(String app, String model, String userKey, EncodedInput input) {

        PlayedKey {
            userKey = userKey == null ? "" : userKey;
        }

        int weight() {
            return 96 + input.length() + 2 * (app.length() + model.length() + userKey.length());
        }
    }
}
