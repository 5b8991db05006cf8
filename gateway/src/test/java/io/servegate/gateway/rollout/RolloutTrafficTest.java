package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.cache.EncodedInput;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutDecider;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.StickyAssignment;
import io.servegate.core.rollout.VersionStats;
import io.servegate.core.selection.Task;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.Prediction;
import io.servegate.gateway.query.PredictionException;
import io.servegate.gateway.registry.Application;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The query path's side of rollouts without a gateway: routing by step and user, what each answer
 * counts for, the feedback join, and the bound on remembered answers.
 */
class RolloutTrafficTest {

    private static final Application APP = new Application("app", "floats", "-1", 1_000, List.of("m"));

    /** The default guards, the candidate starting at its first step at once. */
    static final Guards NO_WARMUP = new Guards(Guards.DEFAULTS.maxSloMissIncrease(), Guards.DEFAULTS.maxErrorRate(),
            Guards.DEFAULTS.maxLossIncrease(), Guards.DEFAULTS.minFeedback(), Guards.DEFAULTS.confidence(),
            Guards.DEFAULTS.minStepQueries(), Guards.DEFAULTS.minStepMillis(), 0);

    /** Sends no shadow copies (the canary tests). */
    static final ShadowAdmission NO_SHADOWS = new ShadowAdmission((m, v) -> true, 0, new SimpleMeterRegistry());

    private final AtomicLong nanos = new AtomicLong();
    private final RolloutCounters counters = new RolloutCounters();

    private static Rollout canary(double share) {
        return Rollout.start("m:2:x", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1, NO_WARMUP,
                share < 1 ? List.of(share, 1.0) : List.of(1.0), 0);
    }

    private static EncodedInput input(int i) {
        return new EncodedInput(ByteBuffer.allocate(4).putInt(i).array());
    }

    /** Answers with the version's name, or a container error for version "2" when {@code failing}. */
    private String answer(RolloutTraffic traffic, String user, int i, boolean failing) {
        return traffic.predict(APP, "m", "1", user, () -> input(i), 0, v -> Mono.just(failing && v.equals("2")
                ? Prediction.ofDefault("-1", DefaultReason.CONTAINER_ERROR, "failed") : Prediction.of(v)),
                (v, timeout) -> Mono.error(new AssertionError("no shadow copies in a canary"))).block().output();
    }

    @Test
    void routesEachUserByItsStickyPointAndCountsEachVersionsOutcomes() {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20, NO_SHADOWS);
        Rollout r = canary(0.3);
        traffic.update(List.of(r));
        int onCandidate = 0;
        for (int u = 0; u < 1000; u++) {
            String user = "uid:" + u;
            String v = answer(traffic, user, u, true);
            boolean expected = StickyAssignment.point(r.id(), user) < 0.3;
            assertThat(v).as(user).isEqualTo(expected ? "-1" : "1");
            onCandidate += expected ? 1 : 0;
        }
        var e = counters.evidence(r.id());
        assertThat(e.candidate().queries()).isEqualTo(onCandidate);
        assertThat(e.candidate().errors()).isEqualTo(onCandidate);
        assertThat(e.candidate().sloMisses()).as("a default is a miss").isEqualTo(onCandidate);
        assertThat(e.baseline().queries()).isEqualTo(1000 - onCandidate);
        assertThat(e.baseline().errors()).isZero();
    }

    @Test
    void answersWithTheCurrentVersionOnceTheBaselineIsNoLongerCurrentOrTheRolloutEnded() {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20, NO_SHADOWS);
        Rollout r = canary(1.0);
        traffic.update(List.of(r));
        assertThat(answer(traffic, "uid:a", 0, false)).isEqualTo("2");
        assertThat(traffic.predict(APP, "m", "3", "uid:a", () -> input(0), 0, v -> Mono.just(Prediction.of(v)),
                (v, timeout) -> Mono.just(v)).block().output()).isEqualTo("3");
        traffic.update(r.abort(1, "operator"));
        assertThat(answer(traffic, "uid:a", 0, false)).isEqualTo("1");
    }

    @Test
    void feedbackIsChargedToTheVersionThatAnsweredThatUsersInput() {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20, NO_SHADOWS);
        Rollout r = canary(1.0);
        traffic.update(List.of(r));
        answer(traffic, "uid:a", 7, false);
        assertThat(traffic.feedback(APP, "uid:b", input(7), "2")).as("another user's input").isEmpty();
        assertThat(traffic.feedback(APP, "uid:a", input(8), "2")).as("another input").isEmpty();
        List<RolloutTraffic.Joined> joins = traffic.feedback(APP, "uid:a", input(7), "1");
        assertThat(joins).hasSize(1);
        RolloutTraffic.Joined j = joins.get(0);
        assertThat(j.version()).isEqualTo("2");
        assertThat(j.loss()).isEqualTo(1.0);
        assertThat(counters.evidence(r.id()).candidate().lossSum()).isEqualTo(1.0);
    }

    @Test
    void eachModelAnAppCallsIsRoutedAndItsFeedbackJoinedByItsOwnRollout() {
        // an exp4 app calls both models, each of which has a canary at 100 %
        Application ensemble = new Application("ens", "floats", "-1", 1_000, List.of("m", "n"));
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20, NO_SHADOWS);
        Rollout rm = canary(1.0);
        Rollout rn = Rollout.start("n:2:x", "n", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                NO_WARMUP, List.of(1.0), 0);
        traffic.update(List.of(rm, rn));
        for (String model : List.of("m", "n")) {
            assertThat(traffic.predict(ensemble, model, "1", "uid:a", () -> input(7), 0,
                    v -> Mono.just(Prediction.of(model + v)), (v, timeout) -> Mono.error(new AssertionError()))
                    .block().output()).isEqualTo(model + "2");
        }
        List<RolloutTraffic.Joined> joins = traffic.feedback(ensemble, "uid:a", input(7), "m2");
        assertThat(joins).extracting(RolloutTraffic.Joined::model, RolloutTraffic.Joined::version,
                RolloutTraffic.Joined::loss).containsExactly(tuple("m", "2", 0.0), tuple("n", "2", 1.0));
        assertThat(counters.evidence(rm.id()).candidate().feedback()).isEqualTo(1);
        assertThat(counters.evidence(rn.id()).candidate().lossSum()).isEqualTo(1.0);
        assertThat(traffic.feedback(APP, "uid:a", input(7), "m2")).as("another app's answers").isEmpty();
    }

    @Test
    void anOipRowIsRoutedByItsKeyAndItsFailuresAndLateAnswersAreMisses() {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20, NO_SHADOWS);
        Rollout r = canary(1.0);
        traffic.update(List.of(r));
        assertThat(traffic.route("other", "1", "id:r")).as("a model without a rollout").isNull();
        assertThat(traffic.route("m", "3", "id:r")).as("the baseline is no longer current").isNull();
        RolloutRoute route = traffic.route("m", "1", "id:r");
        assertThat(route.version()).isEqualTo("2");
        Duration timeout = Duration.ofMillis(5);
        assertThat(traffic.infer(route, timeout, (v, t) -> Mono.just("out" + v)).block()).isEqualTo("out2");
        assertThat(traffic.infer(route, timeout, (v, t) -> Mono.error(new PredictionException(
                DefaultReason.CONTAINER_ERROR, "failed"))).onErrorResume(e -> Mono.just("error")).block())
                .isEqualTo("error");
        assertThat(traffic.infer(route, timeout, (v, t) -> Mono.error(new PredictionException(
                DefaultReason.DEADLINE, null))).onErrorResume(e -> Mono.just("late")).block()).isEqualTo("late");
        traffic.infer(route, timeout, (v, t) -> Mono.fromSupplier(() -> {
            nanos.addAndGet(timeout.toNanos() + 1);
            return "after its timeout";
        })).block();
        var e = counters.evidence(r.id()).candidate();
        assertThat(e.queries()).isEqualTo(4);
        assertThat(e.sloMisses()).isEqualTo(3);
        assertThat(e.errors()).isEqualTo(1);
        assertThat(counters.evidence(r.id()).baseline().queries()).isZero();
    }

    @Test
    void aFloodOfAnswersKeepsTheRememberedOnesWithinTheirBytes() {
        long bound = 20_000;
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), bound, NO_SHADOWS);
        traffic.update(List.of(canary(1.0)));
        int answers = 10_000;
        for (int i = 0; i < answers; i++) {
            answer(traffic, "uid:u" + i, i, false);
        }
        long joined = 0;
        for (int i = 0; i < answers; i++) {
            joined += traffic.feedback(APP, "uid:u" + i, input(i), "2").size();
        }
        // each remembered answer weighs at least 96 + 96 bytes
        assertThat(joined).isPositive().isLessThanOrEqualTo(bound / 192);
    }

    private static Rollout shadow(double fraction) {
        return Rollout.start("m:2:s", "m", "2", "1", RolloutMode.SHADOW, Task.CLASSIFICATION, 1, NO_WARMUP,
                List.of(fraction), 0);
    }

    private static String shadowAnswer(RolloutTraffic traffic, String user, int i, Mono<String> copy) {
        return traffic.predict(APP, "m", "1", user, () -> input(i), 0, v -> Mono.just(Prediction.of(v)),
                (v, timeout) -> {
                    assertThat(v).isEqualTo("2");
                    assertThat(timeout).isEqualTo(Duration.ofMillis(1));
                    return copy;
                }).block().output();
    }

    private double shadowCount(SimpleMeterRegistry meters, String outcome) {
        var c = meters.find("servegate.rollout.shadow").tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void aShadowAnswersEveryUserWithTheBaselineAndCountsTheCandidatesCopiesAgreementAndLoss() throws Exception {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20,
                new ShadowAdmission((m, v) -> true, 64, new SimpleMeterRegistry()));
        Rollout r = shadow(1.0);
        traffic.update(List.of(r));
        for (int u = 0; u < 10; u++) {
            assertThat(shadowAnswer(traffic, "uid:" + u, u, Mono.just(u < 3 ? "1" : "2"))).isEqualTo("1");
        }
        for (int wait = 0; counters.evidence(r.id()).candidate().compared() < 10 && wait < 1000; wait++) {
            Thread.sleep(10); // the copies answer on another thread
        }
        var e = counters.evidence(r.id());
        assertThat(e.candidate().queries()).isEqualTo(10);
        assertThat(e.candidate().compared()).isEqualTo(10);
        assertThat(e.candidate().agreements()).isEqualTo(3);
        assertThat(e.baseline().queries()).isEqualTo(10);
        RolloutTraffic.Joined j = traffic.feedback(APP, "uid:5", input(5), "2").get(0);
        assertThat(j.version()).as("the user's answer was the baseline's").isEqualTo("1");
        e = counters.evidence(r.id());
        assertThat(e.baseline().lossSum()).isEqualTo(1.0);
        assertThat(e.candidate().feedback()).isEqualTo(1);
        assertThat(e.candidate().lossSum()).isZero();
    }

    @Test
    void whileTheCandidateWarmsUpUsersGetTheBaselineAndEachCopyCountsAsOneWarmUpOnly() throws Exception {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20,
                new ShadowAdmission((m, v) -> true, 64, new SimpleMeterRegistry()));
        Rollout r = Rollout.start("m:2:w", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                Guards.DEFAULTS, List.of(1.0), 0);
        traffic.update(List.of(r));
        for (int u = 0; u < 12; u++) {
            // a canary at 100 %, yet every user gets the baseline; a copy the container failed warmed
            // it, one its scheduler dropped did not
            Mono<String> copy = u < 2 ? Mono.error(new PredictionException(DefaultReason.DEADLINE, "dropped"))
                    : u < 4 ? Mono.error(new PredictionException(DefaultReason.CONTAINER_ERROR, "cold"))
                    : Mono.just("2");
            int i = u;
            String answer = traffic.predict(APP, "m", "1", "uid:" + u, () -> input(i), 0,
                    v -> Mono.just(Prediction.of(v)), (v, timeout) -> {
                        assertThat(v).isEqualTo("2");
                        assertThat(timeout).as("ten SLOs to warm up in").isEqualTo(Duration.ofMillis(10));
                        return copy;
                    }).block().output();
            assertThat(answer).isEqualTo("1");
        }
        for (int wait = 0; counters.evidence(r.id()).warmups() < 10 && wait < 1000; wait++) {
            Thread.sleep(10); // the copies answer on another thread
        }
        Thread.sleep(50);
        var e = counters.evidence(r.id());
        assertThat(e.warmups()).isEqualTo(10);
        assertThat(e.candidate()).as("nothing the guards judge").isEqualTo(VersionStats.EMPTY);
        assertThat(e.baseline().queries()).isEqualTo(12);
        RolloutTraffic.Joined j = traffic.feedback(APP, "uid:5", input(5), "2").get(0);
        assertThat(j.version()).isEqualTo("1");
        assertThat(counters.evidence(r.id()).candidate().feedback()).isZero();

        Rollout warmed = RolloutDecider.decide(r,
                new RolloutEvidence(VersionStats.EMPTY, VersionStats.EMPTY, 200), 5);
        traffic.update(warmed);
        assertThat(shadowAnswer(traffic, "uid:1", 1, Mono.error(new AssertionError("no copy once warmed"))))
                .as("once warmed, the canary at 100 % answers with the candidate").isEqualTo("2");
    }

    @Test
    void aFloodOfShadowCopiesKeepsThemInFlightWithinTheirBoundAndDropsTheRest() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20,
                new ShadowAdmission((m, v) -> true, 4, meters));
        traffic.update(List.of(shadow(1.0)));
        for (int u = 0; u < 100; u++) {
            assertThat(shadowAnswer(traffic, "uid:" + u, u, Mono.never())).isEqualTo("1");
        }
        assertThat(shadowCount(meters, "sent")).isEqualTo(4);
        assertThat(shadowCount(meters, "dropped_in_flight")).isEqualTo(96);
    }

    @Test
    void noShadowCopyGoesWhileTheCandidatesSchedulerHasNoRoom() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20,
                new ShadowAdmission((m, v) -> false, 4, meters));
        Rollout r = shadow(1.0);
        traffic.update(List.of(r));
        for (int u = 0; u < 20; u++) {
            assertThat(shadowAnswer(traffic, "uid:" + u, u, Mono.error(new AssertionError("not sent"))))
                    .isEqualTo("1");
        }
        assertThat(shadowCount(meters, "dropped_busy")).isEqualTo(20);
        assertThat(counters.evidence(r.id()).candidate().queries()).isZero();
    }
}
