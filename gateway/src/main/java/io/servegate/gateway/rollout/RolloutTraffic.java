package io.servegate.gateway.rollout;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.servegate.core.cache.EncodedInput;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.RolloutStatus;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.Prediction;
import io.servegate.gateway.query.PredictionException;
import io.servegate.gateway.registry.Application;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The rollouts on the query path: which version answers a query of a single-model app while its
 * model has a canary in progress, what the answer counts for the guards, and the join of
 * feedback with the answer it is about.
 *
 * <p>Routing reads a map of the running or paused canaries, replaced whole when the store is read
 * ({@link RolloutDecisions}, every interval) or an admin call changes one, so a query does one
 * hash lookup and, on a rollout's model, one hash of its user key. A user key is the query's
 * {@code uid} (as {@code uid:<uid>}, or {@code ctx:<context>}); the candidate serves it while its
 * point is below the step's share ({@link Rollout#routesToCandidate}), so every gateway routes a
 * user alike and a user stays on the candidate as the share grows. A query without either is
 * drawn at random with the step's share. A rollout routes only while its baseline is still the
 * model's current version (a {@code set_model_version} meanwhile takes the model out of it).
 *
 * <p>Each answer of a rollout's model is remembered for a while, bounded by bytes and time (app,
 * user key and input → rollout, version, output), so that {@code /{app}/update} can charge the
 * label's loss to the version that answered.
 *
 * <p>While a model has a shadow rollout, every user gets the baseline's answer; once it is
 * answered, a query whose user is in the rollout's fraction is also copied to the candidate if
 * {@link ShadowAdmission} lets it (room in the candidate's scheduler, a bounded number in
 * flight), off the query's thread and never awaited by its answer. The copy has the app's SLO
 * from when it is sent; its outcome counts as the candidate's query, its output is compared with
 * the baseline's (agreement), and feedback on that input charges both versions' losses.
 */
public final class RolloutTraffic {

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
     * Answers one query of a single-model app: with the candidate or the baseline while the
     * model's canary routes, with the baseline (and maybe a shadow copy to the candidate) while
     * its shadow rollout runs, else with {@code current}; counts the outcome for the guards and
     * remembers the answer for feedback.
     *
     * @param userKey     {@code uid:<uid>}, {@code ctx:<context>} or null
     * @param input       the input as the prediction cache keys it, encoded only for a rollout's model
     * @param predictWith the answer of a given version of the model
     * @param shadowWith  a version's output by a timeout, outside the app's metrics (a shadow copy)
     */
    public Mono<Prediction> predict(Application app, String model, String current, String userKey,
            Supplier<EncodedInput> input, long arrivalNanos, Function<String, Mono<Prediction>> predictWith,
            BiFunction<String, Duration, Mono<String>> shadowWith) {
        Rollout r = model == null ? null : routing.get(model);
        if (r == null || !r.baseline().equals(current)) {
            return predictWith.apply(current);
        }
        boolean candidate = userKey != null ? r.routesToCandidate(userKey)
                : ThreadLocalRandom.current().nextDouble() < r.share();
        boolean shadow = r.mode() == RolloutMode.SHADOW;
        return predictWith.apply(candidate && !shadow ? r.candidate() : r.baseline()).doOnNext(p -> {
            long sloNanos = TimeUnit.MICROSECONDS.toNanos(app.latencySloMicros());
            boolean afterSlo = clock.getAsLong() - arrivalNanos > sloNanos;
            counters.query(r.id(), candidate && !shadow, p.isDefault() || afterSlo, isError(p.reason()));
            if (p.isDefault()) {
                return;
            }
            PlayedKey key = new PlayedKey(app.name(), userKey, input.get());
            played.put(key, new Played(r.model(), r.id(), candidate && !shadow, p.output(), null));
            if (shadow && candidate && r.status() == RolloutStatus.RUNNING
                    && shadows.tryAcquire(r)) {
                copy(r, key, p.output(), Duration.ofNanos(sloNanos), shadowWith);
            }
        });
    }

    /** Sends a shadow copy to the candidate and counts what comes back; the user's answer does not wait for it. */
    private void copy(Rollout r, PlayedKey key, String baselineOutput, Duration slo,
            BiFunction<String, Duration, Mono<String>> shadowWith) {
        long sent = clock.getAsLong();
        Mono.defer(() -> shadowWith.apply(r.candidate(), slo)).subscribeOn(Schedulers.parallel())
                .doFinally(s -> shadows.release())
                .subscribe(out -> {
                    counters.query(r.id(), true, clock.getAsLong() - sent > slo.toNanos(), false);
                    counters.comparison(r.id(), out.equals(baselineOutput));
                    played.asMap().computeIfPresent(key, (k, v) -> v.rolloutId().equals(r.id())
                            ? new Played(v.model(), v.rolloutId(), false, v.output(), out) : v);
                }, e -> counters.query(r.id(), true, true,
                        !(e instanceof PredictionException pe) || isError(pe.reason())));
    }

    /** Failures of the version itself: its container failed the batch, or failed so often that its circuit opened. */
    private static boolean isError(DefaultReason reason) {
        return reason == DefaultReason.CONTAINER_ERROR || reason == DefaultReason.CIRCUIT_OPEN;
    }

    /**
     * Joins a feedback label with the latest remembered answer of the input for this app and user
     * key, while that answer's rollout still routes, and counts its loss for the version that gave it.
     * In shadow mode a label counts only for an input the candidate answered too, for both versions
     * (their losses on the same inputs).
     *
     * @return the join, empty when no such answer is remembered
     * @throws IllegalArgumentException for a label the rollout's task cannot measure (a regression label that is not a number)
     */
    public Optional<Joined> feedback(Application app, String userKey, EncodedInput input, String label) {
        Played p = played.getIfPresent(new PlayedKey(app.name(), userKey, input));
        Rollout r = p == null ? null : routing.get(p.model());
        if (r == null || !r.id().equals(p.rolloutId())) {
            return Optional.empty();
        }
        double loss = r.task().loss(p.output(), label, r.scale());
        if (r.mode() == RolloutMode.SHADOW) {
            if (p.shadowOutput() == null) {
                return Optional.empty();
            }
            counters.feedback(r.id(), true, r.task().loss(p.shadowOutput(), label, r.scale()));
        }
        counters.feedback(r.id(), p.candidate(), loss);
        return Optional.of(new Joined(r.id(), p.candidate() ? r.candidate() : r.baseline(), loss));
    }

    /**
     * A feedback label charged to a rollout's version.
     *
     * @param rolloutId the rollout
     * @param version   the version whose answer it was about
     * @param loss      the label's loss on that answer
     */
    public record Joined(String rolloutId, String version, double loss) {
    }

    /** An answer, and in shadow mode the candidate's output on the same input once its copy answered (else null). */
    private record Played(String model, String rolloutId, boolean candidate, String output, String shadowOutput) {

        int weight() {
            return 96 + 2 * (model.length() + rolloutId.length() + output.length()
                    + (shadowOutput == null ? 0 : shadowOutput.length()));
        }
    }

    /** An app, user key and input, the input compared by its encoded bytes. */
    private record PlayedKey(String app, String userKey, EncodedInput input) {

        PlayedKey {
            userKey = userKey == null ? "" : userKey;
        }

        int weight() {
            return 96 + input.length() + 2 * (app.length() + userKey.length());
        }
    }
}
