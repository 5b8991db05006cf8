package io.servegate.core.autoscaling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Decisions from signals, in virtual time. */
class AutoscalerTest {

    private static final long S = 1_000_000_000L;
    /** ℓ(b) = 5 ms + 0.5 ms·b, SLO 20 ms: one replica carries 1,286/s in batches of 9 (Symphony eq. 2–3). */
    private static final CapacityModel MODEL = new CapacityModel(b -> 5_000_000L + 500_000L * b, 20_000_000L, 64);
    private static final AutoscalerConfig CONFIG = AutoscalerConfig.of(1, 10);

    /** A tick: {@code arrived}, {@code bad} cumulative, rates in queries per second. */
    private static ScalingSignals tick(long at, int replicas, long arrived, long bad, double idle, double recent,
            double sustained) {
        return new ScalingSignals(at, replicas, replicas, arrived, bad, idle, 0, recent, S, sustained, MODEL);
    }

    @Test
    void steadyLoadWithinThePlanChangesNothing() {
        Autoscaler a = new Autoscaler(CONFIG);
        double rate = MODEL.capacity(2) * 0.7; // under 75 % of two replicas
        for (int t = 0; t < 120; t++) {
            assertThat(a.decide(tick(t * S, 2, (long) (t * rate), 0, 0.2, rate, rate))).isNull();
        }
    }

    @Test
    void anEnvelopeAboveThePlanScalesUpAtOnceDoublingEachTickToWhatItNeeds() {
        Autoscaler a = new Autoscaler(CONFIG);
        double rate = MODEL.capacity(3) * 0.75 - 1; // needs 3 at 75 %
        assertThat(a.decide(tick(0, 1, 0, 0, 0.5, 200, 200))).isNull();
        ScalingDecision d = a.decide(tick(S, 1, 200, 0, 0.1, rate, rate));
        assertThat(d.to()).isEqualTo(2);
        assertThat(d.reason()).isEqualTo(ScalingReason.ENVELOPE);
        assertThat(d.detail()).contains("planned for 1");
        assertThat(a.decide(tick(2 * S, 2, 400, 0, 0.1, rate, rate)).to()).isEqualTo(3);
        assertThat(a.decide(tick(3 * S, 3, 600, 0, 0.1, rate, rate))).isNull();
        // never above max_replicas
        Autoscaler b = new Autoscaler(CONFIG);
        int n = 1;
        for (int t = 0; t < 6; t++) {
            ScalingDecision up = b.decide(tick(t * S, n, 0, 0, 0, 1e9, 1e9));
            n = up == null ? n : up.to();
        }
        assertThat(n).isEqualTo(10);
    }

    @Test
    void aBadRateAddsSymphonysStepOncePerSettlePeriod() {
        AutoscalerConfig config = CONFIG.withPolicy(AutoscalingPolicy.SIGNALS);
        Autoscaler a = new Autoscaler(config);
        assertThat(a.decide(tick(0, 4, 0, 0, 0, 0, 0))).isNull();
        // 1,000 arrivals, 200 bad: r = 0.2 → N·r/(1−r) = 1 more
        ScalingDecision d = a.decide(tick(S, 4, 1_000, 200, 0, 0, 0));
        assertThat(d.to()).isEqualTo(5);
        assertThat(d.reason()).isEqualTo(ScalingReason.BAD_RATE);
        // still bad one second later: waits for the new replica to show its effect
        assertThat(a.decide(tick(2 * S, 5, 2_000, 400, 0, 0, 0))).isNull();
        assertThat(a.decide(tick(6 * S, 5, 3_000, 600, 0, 0, 0)).to()).isEqualTo(7);
        // a tick with too few queries says nothing
        assertThat(a.decide(tick(12 * S, 7, 3_010, 610, 0, 0, 0))).isNull();
    }

    @Test
    void aBadRateWhileTheReplicasSitIdleAddsNone() {
        Autoscaler a = new Autoscaler(CONFIG.withPolicy(AutoscalingPolicy.SIGNALS));
        a.decide(tick(0, 2, 0, 0, 0.9, 0, 0));
        // half the queries bad, yet the replicas idle 90 % of the time: the loss is not theirs
        assertThat(a.decide(tick(S, 2, 1_000, 500, 0.9, 0, 0))).isNull();
        assertThat(a.decide(tick(2 * S, 2, 2_000, 1_000, 0.1, 0, 0)).reason()).isEqualTo(ScalingReason.BAD_RATE);
    }

    @Test
    void aReplicaStillStartingHoldsBadRateScaleUps() {
        Autoscaler a = new Autoscaler(CONFIG.withPolicy(AutoscalingPolicy.SIGNALS));
        a.decide(tick(0, 4, 0, 0, 0, 0, 0));
        ScalingSignals starting = new ScalingSignals(S, 4, 3, 1_000, 500, 0, 0, 0, S, 0, MODEL);
        assertThat(a.decide(starting)).isNull();
    }

    @Test
    void idleReplicasGoOnlyAfterTheCooldownAndNotBelowTheRecentPeak() {
        Autoscaler a = new Autoscaler(CONFIG);
        double peak = MODEL.capacity(3) * 0.75 * 0.9 - 1; // the cooldown's busiest rate needs 3, with the hysteresis
        List<ScalingDecision> decisions = new ArrayList<>();
        for (int t = 0; t <= 30; t++) {
            ScalingDecision d = a.decide(tick(t * S, 6, t * 100L, 0, 0.8, 100, peak));
            if (d != null) {
                decisions.add(d);
            }
        }
        assertThat(decisions).hasSize(1);
        ScalingDecision d = decisions.get(0);
        assertThat(d.atNanos()).isEqualTo(15 * S); // idle from t = 0, cooldown 15 s
        assertThat(d.to()).isEqualTo(3);
        assertThat(d.reason()).isEqualTo(ScalingReason.IDLE);
    }

    @Test
    void busyReplicasAreKeptAndIdlenessMustLastTheWholeCooldown() {
        Autoscaler a = new Autoscaler(CONFIG);
        for (int t = 0; t <= 40; t++) {
            double idle = t % 10 == 9 ? 0.1 : 0.8; // a busy second every ten restarts the clock
            assertThat(a.decide(tick(t * S, 6, t * 100L, 0, idle, 100, 100))).isNull();
        }
    }

    @Test
    void theSignalsPolicyRemovesTheIdleShareButKeepsMinReplicas() {
        Autoscaler a = new Autoscaler(AutoscalerConfig.of(2, 10).withPolicy(AutoscalingPolicy.SIGNALS));
        ScalingDecision d = null;
        for (int t = 0; t <= 15 && d == null; t++) {
            d = a.decide(tick(t * S, 8, t * 100L, 0, 0.5, 0, 0));
        }
        assertThat(d.to()).isEqualTo(4); // 8 − ⌊8 · 0.5⌋
        Autoscaler b = new Autoscaler(AutoscalerConfig.of(2, 10).withPolicy(AutoscalingPolicy.SIGNALS));
        d = null;
        for (int t = 0; t <= 15 && d == null; t++) {
            d = b.decide(tick(t * S, 3, t * 100L, 0, 0.95, 0, 0));
        }
        assertThat(d.to()).isEqualTo(2);
    }

    @Test
    void replicasOutsideTheBoundsAreBroughtBack() {
        Autoscaler a = new Autoscaler(AutoscalerConfig.of(2, 5));
        assertThat(a.decide(tick(0, 1, 0, 0, 0, 0, 0)).reason()).isEqualTo(ScalingReason.MIN_REPLICAS);
        ScalingDecision d = new Autoscaler(AutoscalerConfig.of(2, 5)).decide(tick(0, 9, 0, 0, 0, 0, 0));
        assertThat(d.to()).isEqualTo(5);
        assertThat(d.reason()).isEqualTo(ScalingReason.MAX_REPLICAS);
    }

    @Test
    void aProfileOnWhichTheReplicasCannotMeetTheSloIsIgnored() {
        CapacityModel hopeless = new CapacityModel(b -> 30_000_000L, 20_000_000L, 8);
        Autoscaler a = new Autoscaler(CONFIG);
        assertThat(a.decide(new ScalingSignals(0, 1, 1, 0, 0, 0.5, 0, 500, S, 500, hopeless))).isNull();
        assertThat(a.decide(new ScalingSignals(S, 1, 1, 100, 0, 0.5, 0, 500, S, 500, hopeless))).isNull();
    }

    @Test
    void withoutAProfileTheEnvelopePolicyFallsBackToTheSignals() {
        Autoscaler a = new Autoscaler(CONFIG);
        a.decide(new ScalingSignals(0, 2, 2, 0, 0, 0, 0, 1e6, S, 1e6, null));
        ScalingDecision d = a.decide(new ScalingSignals(S, 2, 2, 1_000, 500, 0, 0, 1e6, S, 1e6, null));
        assertThat(d.reason()).isEqualTo(ScalingReason.BAD_RATE);
        assertThat(d.to()).isEqualTo(4);
    }

    /** A pipeline stage's autoscaler plans for the stage's budget; without one, for the scheduler's SLO. */
    @Test
    void theConfiguredSloReplacesTheSchedulersOnlyWhenSet() {
        assertThat(CONFIG.sloNanos()).isZero();
        assertThat(CONFIG.sloNanosOr(20_000_000L)).isEqualTo(20_000_000L);
        AutoscalerConfig stage = CONFIG.withSlo(8_000_000L).withTiming(S, S).withThresholds(0.5, 0.1, 0.2);
        assertThat(stage.sloNanosOr(20_000_000L)).as("kept through the other with-methods").isEqualTo(8_000_000L);
        assertThatThrownBy(() -> CONFIG.withSlo(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SLO");
    }
}
