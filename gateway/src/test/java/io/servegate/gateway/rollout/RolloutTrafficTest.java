package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.cache.EncodedInput;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.StickyAssignment;
import io.servegate.core.selection.Task;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.Prediction;
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

    private final AtomicLong nanos = new AtomicLong();
    private final RolloutCounters counters = new RolloutCounters();

    private static Rollout canary(double share) {
        return Rollout.start("m:2:x", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1, Guards.DEFAULTS,
                share < 1 ? List.of(share, 1.0) : List.of(1.0), 0);
    }

    private static EncodedInput input(int i) {
        return new EncodedInput(ByteBuffer.allocate(4).putInt(i).array());
    }

    /** Answers with the version's name, or a container error for version "2" when {@code failing}. */
    private String answer(RolloutTraffic traffic, String user, int i, boolean failing) {
        return traffic.predict(APP, "m", "1", user, () -> input(i), 0, v -> Mono.just(failing && v.equals("2")
                ? Prediction.ofDefault("-1", DefaultReason.CONTAINER_ERROR, "failed") : Prediction.of(v)))
                .block().output();
    }

    @Test
    void routesEachUserByItsStickyPointAndCountsEachVersionsOutcomes() {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20);
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
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20);
        Rollout r = canary(1.0);
        traffic.update(List.of(r));
        assertThat(answer(traffic, "uid:a", 0, false)).isEqualTo("2");
        assertThat(traffic.predict(APP, "m", "3", "uid:a", () -> input(0), 0, v -> Mono.just(Prediction.of(v)))
                .block().output()).isEqualTo("3");
        traffic.update(r.abort(1, "operator"));
        assertThat(answer(traffic, "uid:a", 0, false)).isEqualTo("1");
    }

    @Test
    void feedbackIsChargedToTheVersionThatAnsweredThatUsersInput() {
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), 1 << 20);
        Rollout r = canary(1.0);
        traffic.update(List.of(r));
        answer(traffic, "uid:a", 7, false);
        assertThat(traffic.feedback(APP, "uid:b", input(7), "2")).as("another user's input").isEmpty();
        assertThat(traffic.feedback(APP, "uid:a", input(8), "2")).as("another input").isEmpty();
        RolloutTraffic.Joined j = traffic.feedback(APP, "uid:a", input(7), "1").orElseThrow();
        assertThat(j.version()).isEqualTo("2");
        assertThat(j.loss()).isEqualTo(1.0);
        assertThat(counters.evidence(r.id()).candidate().lossSum()).isEqualTo(1.0);
    }

    @Test
    void aFloodOfAnswersKeepsTheRememberedOnesWithinTheirBytes() {
        long bound = 20_000;
        RolloutTraffic traffic = new RolloutTraffic(counters, nanos::get, Duration.ofMinutes(1), bound);
        traffic.update(List.of(canary(1.0)));
        int answers = 10_000;
        for (int i = 0; i < answers; i++) {
            answer(traffic, "uid:u" + i, i, false);
        }
        long joined = 0;
        for (int i = 0; i < answers; i++) {
            joined += traffic.feedback(APP, "uid:u" + i, input(i), "2").isPresent() ? 1 : 0;
        }
        // each remembered answer weighs at least 96 + 96 bytes
        assertThat(joined).isPositive().isLessThanOrEqualTo(bound / 192);
    }
}
