package io.servegate.core.rollout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.servegate.core.selection.Task;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Decisions in virtual time: 100 queries a second, each labelled at once; while the candidate
 * warms up, every query is copied to it too.
 */
class RolloutDeciderTest {

    private static final Guards NO_WARMUP = new Guards(0.01, 0.01, 0.02, 200, 0.99, 100, 10_000, 0);

    private static Rollout canary(long now) {
        return canary(Guards.DEFAULTS, now);
    }

    private static Rollout canary(Guards guards, long now) {
        return Rollout.start("r1", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1, guards,
                Rollout.DEFAULT_STEPS, now);
    }

    /** Runs until the rollout is final or {@code seconds} pass; returns it. */
    private static Rollout run(Rollout r, double candidateAccuracy, double candidateMissRate, int seconds) {
        return run(r, candidateAccuracy, candidateMissRate, 0, seconds);
    }

    /**
     * As {@link #run(Rollout, double, double, int)}, the candidate's first {@code coldAnswers}
     * answers (warm-up copies included) missing the SLO, as a freshly started container's do.
     */
    private static Rollout run(Rollout r, double candidateAccuracy, double candidateMissRate, int coldAnswers,
            int seconds) {
        SplittableRandom rnd = new SplittableRandom(7);
        RolloutEvidence e = RolloutEvidence.EMPTY;
        long uid = 0;
        long candidateAnswers = 0;
        for (long t = 0; t < seconds * 1000L && !r.status().isFinal(); t += 10) {
            String user = "u" + (uid++ % 5000);
            if (r.warming()) {
                candidateAnswers++;
                e = e.withWarmup();
            }
            boolean cand = r.routesToCandidate(user);
            double accuracy = cand ? candidateAccuracy : 0.9;
            double loss = rnd.nextDouble() < accuracy ? 0 : 1;
            boolean miss = cand && (candidateAnswers++ < coldAnswers || rnd.nextDouble() < candidateMissRate);
            VersionStats s = (cand ? e.candidate() : e.baseline()).withQuery(miss, false).withFeedback(loss);
            e = cand ? new RolloutEvidence(s, e.baseline(), e.warmups())
                    : new RolloutEvidence(e.candidate(), s, e.warmups());
            r = RolloutDecider.decide(r, e, t);
        }
        return r;
    }

    @Test
    void aLessAccurateCandidateIsRolledBackAtItsFirstStep() {
        Rollout r = run(canary(0), 0.8, 0, 3600);
        assertThat(r.status()).isEqualTo(RolloutStatus.ROLLED_BACK);
        assertThat(r.share()).isZero();
        Decision last = r.history().get(r.history().size() - 1);
        assertThat(last.kind()).isEqualTo(DecisionKind.ROLLBACK);
        assertThat(last.fromShare()).isLessThanOrEqualTo(0.05);
        assertThat(last.reason()).contains("loss_increase");
    }

    @Test
    void aCandidateMissingTheSloIsRolledBack() {
        Rollout r = run(canary(0), 0.9, 0.05, 3600);
        assertThat(r.status()).isEqualTo(RolloutStatus.ROLLED_BACK);
        assertThat(r.history().get(r.history().size() - 1).reason()).contains("slo_miss_increase");
    }

    @Test
    void anEqualCandidateIsPromotedThroughEveryStep() {
        Rollout r = run(canary(0), 0.9, 0, 3600);
        assertThat(r.status()).isEqualTo(RolloutStatus.PROMOTED);
        assertThat(r.share()).isEqualTo(1.0);
        assertThat(r.history()).extracting(Decision::kind).containsExactly(DecisionKind.START, DecisionKind.WARMED,
                DecisionKind.ADVANCE, DecisionKind.ADVANCE, DecisionKind.ADVANCE, DecisionKind.ADVANCE,
                DecisionKind.PROMOTE);
        for (int i = 2; i < r.history().size(); i++) {
            // every step lasted at least the guards' minimum
            assertThat(r.history().get(i).atMillis() - r.history().get(i - 1).atMillis())
                    .isGreaterThanOrEqualTo(Guards.DEFAULTS.minStepMillis());
        }
    }

    @Test
    void aColdCandidateIsJudgedOnlyOnceWarmedUp() {
        // its first 20 answers are late, every later one in time: judged cold, one of its first
        // few answers at the 1 % step breaches the 1 % limit
        Rollout cold = run(canary(NO_WARMUP, 0), 0.9, 0, 20, 3600);
        assertThat(cold.status()).isEqualTo(RolloutStatus.ROLLED_BACK);
        assertThat(cold.history().get(cold.history().size() - 1).reason()).contains("slo_miss_increase");

        Rollout warmed = run(canary(0), 0.9, 0, 20, 3600);
        assertThat(warmed.status()).isEqualTo(RolloutStatus.PROMOTED);
        Decision w = warmed.history().get(1);
        assertThat(w.kind()).isEqualTo(DecisionKind.WARMED);
        assertThat(w.fromShare()).isZero();
        assertThat(w.toShare()).isEqualTo(0.01);
        // 200 copies at 100 a second: the first step began after 2 s, and was timed from then
        assertThat(w.atMillis()).isEqualTo(1990);
        assertThat(warmed.history().get(2).atMillis() - w.atMillis()).isGreaterThanOrEqualTo(10_000);
    }

    @Test
    void whileWarmingNoUserIsServedByTheCandidateAndNothingIsJudged() {
        Rollout r = canary(0);
        assertThat(r.warming()).isTrue();
        assertThat(r.share()).isZero();
        assertThat(r.routesToCandidate("anyone")).isFalse();
        // a candidate failing everything still warms up: its failures are judged at the first step
        VersionStats awful = new VersionStats(1000, 1000, 1000, 0, 0, 1000, 1000);
        RolloutEvidence e = new RolloutEvidence(awful, VersionStats.EMPTY, 199);
        assertThat(RolloutDecider.decide(r, e, 1000)).isSameAs(r);
        Rollout paused = r.pause(1100);
        assertThat(paused.warming()).isTrue();
        assertThat(RolloutDecider.decide(paused, e.withWarmup(), 1200)).isSameAs(paused);
        Rollout resumed = paused.resume(1300, 0);
        assertThat(resumed.warming()).isTrue();
        Rollout warmed = RolloutDecider.decide(resumed, new RolloutEvidence(VersionStats.EMPTY, VersionStats.EMPTY, 200),
                1400);
        assertThat(warmed.warming()).isFalse();
        assertThat(warmed.status()).isEqualTo(RolloutStatus.RUNNING);
        assertThat(warmed.share()).isEqualTo(0.01);
        assertThat(warmed.stepStartedAtMillis()).isEqualTo(1400);
        assertThat(warmed.abort(1500, "operator").warming()).isFalse();
    }

    @Test
    void holdsWithoutEnoughFeedback() {
        Guards g = new Guards(0.01, 0.01, 0.02, 1_000_000, 0.99, 0, 0, 0);
        Rollout r = Rollout.start("r", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1, g,
                Rollout.DEFAULT_STEPS, 0);
        Rollout after = run(r, 0.9, 0, 600);
        assertThat(after.status()).isEqualTo(RolloutStatus.RUNNING);
        assertThat(after.stepIndex()).isZero();
    }

    @Test
    void aShadowPassesInsteadOfPromoting() {
        Rollout r = Rollout.start("s", "m", "2", "1", RolloutMode.SHADOW, Task.CLASSIFICATION, 1, Guards.DEFAULTS,
                List.of(0.2), 0);
        Rollout after = run(r, 0.9, 0, 3600);
        assertThat(after.status()).isEqualTo(RolloutStatus.PASSED);
        assertThat(after.share()).isZero();
    }

    @Test
    void pausedRolloutsAreNotDecidedAndAbortIsFinal() {
        Rollout paused = canary(NO_WARMUP, 0).pause(5);
        assertThat(run(paused, 0.5, 0.5, 60)).isSameAs(paused);
        assertThat(paused.share()).isEqualTo(0.01);
        Rollout resumed = paused.resume(10, 0);
        assertThat(resumed.status()).isEqualTo(RolloutStatus.RUNNING);
        Rollout aborted = resumed.abort(20, "operator");
        assertThat(aborted.status()).isEqualTo(RolloutStatus.ABORTED);
        assertThat(aborted.share()).isZero();
        assertThat(aborted.abort(30, "again")).isSameAs(aborted);
        assertThat(aborted.history()).extracting(Decision::kind)
                .containsExactly(DecisionKind.START, DecisionKind.PAUSE, DecisionKind.RESUME, DecisionKind.ABORT);
    }

    @Test
    void rejectsBadDefinitions() {
        assertThatThrownBy(() -> Rollout.start("r", "m", "1", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                Guards.DEFAULTS, Rollout.DEFAULT_STEPS, 0)).hasMessageContaining("current version");
        assertThatThrownBy(() -> Rollout.start("r", "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                Guards.DEFAULTS, List.of(0.5, 0.2), 0)).hasMessageContaining("increase");
        assertThatThrownBy(() -> Rollout.start("r", "m", "2", "1", RolloutMode.SHADOW, Task.CLASSIFICATION, 1,
                Guards.DEFAULTS, List.of(0.1, 0.2), 0)).hasMessageContaining("shadow");
        assertThatThrownBy(() -> new Guards(1.5, 0.01, 0.02, 0, 0.99, 0, 0, 0)).hasMessageContaining("max_slo_miss_increase");
    }

    @Test
    void theSloGuardJudgesTheCandidatesMissesBeyondTheBaselines() {
        Guards g = new Guards(0.01, 0.01, 0.02, 0, 0.95, 0, 0, 0);
        // Newcombe (1998), method 10: 56/70 minus 48/80 is 0.2000 in [0.0524, 0.3339] at 95 %
        GuardValue newcombe = GuardCheck.evaluate(g, new RolloutEvidence(stats(70, 56), stats(80, 48))).get(0);
        assertThat(newcombe.value()).isCloseTo(0.2, within(1e-9));
        assertThat(newcombe.lower()).isCloseTo(0.0524, within(1e-4));
        assertThat(newcombe.upper()).isCloseTo(0.3339, within(1e-4));
        // a loaded machine: both versions miss 2.4 %; the candidate is not to blame
        GuardValue alike = GuardCheck.evaluate(g, new RolloutEvidence(stats(400, 10), stats(4000, 96))).get(0);
        assertThat(alike.verdict()).isNotEqualTo(GuardVerdict.BREACHED);
        // the same candidate against a baseline that misses nothing: 2.5 % of its own
        GuardValue worse = GuardCheck.evaluate(g, new RolloutEvidence(stats(400, 10), stats(4000, 0))).get(0);
        assertThat(worse.verdict()).isEqualTo(GuardVerdict.BREACHED);
    }

    /** {@code n} queries of which {@code misses} missed the SLO. */
    private static VersionStats stats(int n, int misses) {
        VersionStats s = VersionStats.EMPTY;
        for (int i = 0; i < n; i++) {
            s = s.withQuery(i < misses, false);
        }
        return s;
    }

    @Test
    void guardBoundsAreWilsonAndNormal() {
        assertThat(GuardCheck.normalQuantile(0.975)).isCloseTo(1.959964, within(1e-5));
        assertThat(GuardCheck.normalQuantile(0.005)).isCloseTo(-2.575829, within(1e-5));
        VersionStats c = VersionStats.EMPTY;
        for (int i = 0; i < 100; i++) {
            c = c.withQuery(i < 10, false);
        }
        GuardValue miss = GuardCheck.evaluate(new Guards(0.01, 0.01, 0.02, 0, 0.95, 0, 0, 0),
                new RolloutEvidence(c, VersionStats.EMPTY)).get(0);
        // Wilson 95 % interval of 10/100: [0.0552, 0.1744]
        assertThat(miss.lower()).isCloseTo(0.0552, within(1e-3));
        assertThat(miss.upper()).isCloseTo(0.1744, within(1e-3));
        assertThat(miss.verdict()).isEqualTo(GuardVerdict.BREACHED);
    }
}
