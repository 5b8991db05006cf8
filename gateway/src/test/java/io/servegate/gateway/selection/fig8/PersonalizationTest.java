package io.servegate.gateway.selection.fig8;

import static io.servegate.gateway.selection.fig8.SelectionReplay.ALL_MODELS;
import static io.servegate.gateway.selection.fig8.SelectionReplay.CNN;
import static io.servegate.gateway.selection.fig8.SelectionReplay.MLP;
import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.gateway.selection.fig8.SelectionReplay.Corruption;
import io.servegate.sim.selection.ErrorCurve;
import io.servegate.sim.selection.SelectionRun;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * An analogue of Clipper's Figure 10 (NSDI'17 §5.3, personalized model selection): when which
 * model is good depends on the user, one selection state per user (the gateway's per-context
 * states) beats one state shared by the whole application.
 *
 * <p>Twenty users in two groups, each of the {@value #QUERIES} queries from a user drawn
 * uniformly: for group 1 (users 0..9) fmnist-cnn answers uniformly random labels for the whole
 * run, for group 2 (users 10..19) fmnist-mlp does. Per user, the best model is then the mlp
 * (group 1) or the cnn (group 2); across all users both are wrong about half the time, so an
 * application-wide state can at best settle on the logreg (17% error). Each user sees only about
 * 400 queries, so the per-user states pay for learning 20 times over and still win.
 *
 * <p>Policies at their defaults (Exp3 {@code η = 0.1, γ = 0.05}; Exp4 {@code η = 0.1}). Exp3's
 * final error varies by about a point between seeds, so the assertion is on the mean over
 * {@value #SEEDS} fixed seeds (deterministic); across 10 seeds per-user Exp3 won every time by
 * about 2.5 points. Exp4 (the policy of the paper's Figure 10) is checked the same way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PersonalizationTest {

    static final int QUERIES = 8_000;
    static final int USERS = 20;
    static final int SEEDS = 3;

    private double exp3PerUser;
    private double exp3AppWide;
    private double exp4PerUser;
    private double exp4AppWide;

    @BeforeAll
    void replay() {
        long start = System.nanoTime();
        List<Corruption> corruptions = List.of(
                Corruption.forUsers(CNN, u -> u < USERS / 2),
                Corruption.forUsers(MLP, u -> u >= USERS / 2));
        List<ErrorCurve> means = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        for (long seed = 1; seed <= SEEDS; seed++) {
            SelectionRun scenario = SelectionReplay.scenario(ALL_MODELS, QUERIES, USERS, seed, corruptions);
            List<ErrorCurve> curves = new ArrayList<>(scenario.staticModels());
            ErrorCurve e3u = scenario.run("exp3 per-user", new Exp3Policy(), seed, true);
            ErrorCurve e3a = scenario.run("exp3 app-wide", new Exp3Policy(), seed, false);
            ErrorCurve e4u = scenario.run("exp4 per-user", new Exp4Policy(), seed, true);
            ErrorCurve e4a = scenario.run("exp4 app-wide", new Exp4Policy(), seed, false);
            curves.addAll(List.of(e3u, e3a, e4u, e4a));
            exp3PerUser += e3u.last() / SEEDS;
            exp3AppWide += e3a.last() / SEEDS;
            exp4PerUser += e4u.last() / SEEDS;
            exp4AppWide += e4a.last() / SEEDS;
            out.append(ErrorCurve.table("seed " + seed, curves, 0, 2_000, 4_000, 6_000, QUERIES));
        }
        System.out.printf(Locale.ROOT, "Figure 10 analogue: %d queries, %d users (%s random for users 0..%d, %s for %d..%d);"
                + " %.1f s%n%s  mean over %d seeds: exp3 per-user %.4f, app-wide %.4f; exp4 per-user %.4f, app-wide %.4f%n",
                QUERIES, USERS, CNN, USERS / 2 - 1, MLP, USERS / 2, USERS - 1, (System.nanoTime() - start) / 1e9,
                out, SEEDS, exp3PerUser, exp3AppWide, exp4PerUser, exp4AppWide);
    }

    @Test
    void perUserExp3BeatsAppWideExp3() {
        assertThat(exp3PerUser).as("mean final cumulative error, per-user vs app-wide exp3").isLessThan(exp3AppWide);
    }

    @Test
    void perUserExp4BeatsAppWideExp4() {
        assertThat(exp4PerUser).as("mean final cumulative error, per-user vs app-wide exp4").isLessThan(exp4AppWide);
    }
}
