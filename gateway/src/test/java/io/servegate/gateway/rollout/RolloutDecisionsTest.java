package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.rollout.DecisionKind;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.RolloutStatus;
import io.servegate.core.selection.Task;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two gateways' rollout work over one store and one registry, ticked by hand on a hand-set clock:
 * the one that owns the candidate decides from both gateways' evidence, the other only stores
 * its evidence and routes by what the owner decided.
 */
class RolloutDecisionsTest {

    private static final Guards LENIENT = new Guards(0.1, 0.1, 0.1, 30, 0.95, 10, 0, 0);

    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final InMemoryRolloutStore store = new InMemoryRolloutStore();
    private final AtomicLong now = new AtomicLong(1_000);
    private final Gateway owner = new Gateway(true);
    private final Gateway other = new Gateway(false);

    /** One gateway's rollout side. */
    private final class Gateway {
        final RolloutCounters counters = new RolloutCounters();
        final RolloutTraffic traffic = new RolloutTraffic(counters, System::nanoTime, Duration.ofMinutes(1), 1 << 20, RolloutTrafficTest.NO_SHADOWS);
        final RolloutDecisions decisions;
        final RolloutAdmin admin = new RolloutAdmin(store, traffic, registry, now::get);

        Gateway(boolean owns) {
            decisions = new RolloutDecisions(store, traffic, counters, registry, (m, v) -> owns,
                    owns ? "owner" : "other", now::get, new RolloutMeters(new SimpleMeterRegistry()));
        }

        void tick() {
            decisions.tick().block(Duration.ofSeconds(5));
        }
    }

    @BeforeEach
    void models() {
        for (String v : List.of("2", "1")) {
            registry.addModel(new ModelVersion("m", v, List.of(), "floats", "", "", -1)).block();
        }
    }

    private Rollout start() {
        return start(LENIENT);
    }

    private Rollout start(Guards guards) {
        return owner.admin.start(new RolloutAdmin.Request("m", "2", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                guards, List.of(0.5, 1.0))).block();
    }

    private Rollout stored() {
        return store.get("m").block();
    }

    /** Good answers on the other gateway: candidate and baseline queries, and feedback with loss 0. */
    private void goodEvidence(int queries) {
        for (int i = 0; i < queries; i++) {
            other.counters.query(stored().id(), true, false, false);
            other.counters.feedback(stored().id(), true, 0);
            other.counters.feedback(stored().id(), false, 0);
        }
    }

    @Test
    void onlyTheOwnerDecidesFromEveryGatewaysEvidenceAndPromotesThroughTheRegistry() {
        start();
        goodEvidence(100);
        other.tick();
        assertThat(stored().stepIndex()).as("the other gateway does not decide").isZero();

        owner.tick();
        assertThat(stored().stepIndex()).as("the owner advanced on the other's evidence").isEqualTo(1);
        assertThat(stored().stepStartQueries()).isEqualTo(100);

        other.tick();
        assertThat(other.traffic.routing("m").share()).as("the other gateway routes by the owner's step").isEqualTo(1.0);
        goodEvidence(20);
        other.tick();
        owner.tick();
        Rollout done = stored();
        assertThat(done.status()).isEqualTo(RolloutStatus.PROMOTED);
        assertThat(done.history().stream().map(d -> d.kind()).toList())
                .containsExactly(DecisionKind.START, DecisionKind.ADVANCE, DecisionKind.PROMOTE);
        assertThat(registry.snapshot().currentVersion("m")).contains("2");
    }

    @Test
    void warmUpsCountedOnEveryGatewayStartTheFirstStepOnTheOwnerAndCountForNothingElse() {
        Guards g = LENIENT;
        start(new Guards(g.maxSloMissIncrease(), g.maxErrorRate(), g.maxLossIncrease(), g.minFeedback(), g.confidence(),
                g.minStepQueries(), g.minStepMillis(), 20));
        assertThat(stored().warming()).isTrue();
        for (int i = 0; i < 12; i++) {
            other.counters.warmup(stored().id());
            owner.counters.warmup(stored().id());
        }
        owner.tick();
        assertThat(stored().warming()).as("the owner has stored only its own 12 so far").isTrue();
        other.tick();
        assertThat(stored().warming()).as("only the owner decides").isTrue();
        owner.tick();
        Rollout r = stored();
        assertThat(r.warming()).as("24 warm-ups over the fleet").isFalse();
        assertThat(r.share()).isEqualTo(0.5);
        assertThat(r.history().get(1).kind()).isEqualTo(DecisionKind.WARMED);
        assertThat(r.history().get(1).reason()).contains("24 copies");
        assertThat(store.evidence(r.id()).block().candidate().queries()).as("warm-ups are no candidate queries")
                .isZero();
        other.tick();
        assertThat(other.traffic.routing("m").warming()).as("the other gateway routes by the owner's decision")
                .isFalse();
    }

    @Test
    void candidateErrorsRollTheRolloutBackAndLeaveTheCurrentVersion() {
        start();
        for (int i = 0; i < 50; i++) {
            other.counters.query(stored().id(), true, false, true);
        }
        other.tick();
        owner.tick();
        Rollout r = stored();
        assertThat(r.status()).isEqualTo(RolloutStatus.ROLLED_BACK);
        assertThat(r.history().get(r.history().size() - 1).reason()).startsWith("guard breached: error_rate");
        assertThat(registry.snapshot().currentVersion("m")).contains("1");
    }

    @Test
    void aCurrentVersionChangedByHandAbortsTheRollout() {
        start();
        registry.setModelVersion("m", "2").block();
        owner.tick();
        Rollout r = stored();
        assertThat(r.status()).isEqualTo(RolloutStatus.ABORTED);
        assertThat(r.history().get(r.history().size() - 1).reason()).contains("current version is now '2'");
    }

    @Test
    void aDecisionRacingAnOperatorsCallIsNotStored() {
        Rollout started = start();
        goodEvidence(100);
        other.tick();
        // the operator pauses between the owner's read and its write: the write must not win
        Rollout paused = owner.admin.pause("m").block();
        assertThat(store.replace("m", started, started.abort(now.get(), "late")).block()).isFalse();
        assertThat(stored()).isEqualTo(paused);
        owner.tick();
        assertThat(stored().status()).as("a paused rollout takes no decision").isEqualTo(RolloutStatus.PAUSED);
    }
}
