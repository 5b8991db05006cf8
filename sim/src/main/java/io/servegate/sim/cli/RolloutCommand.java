package io.servegate.sim.cli;

import io.servegate.core.rollout.Decision;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.selection.Task;
import io.servegate.sim.report.Summary;
import io.servegate.sim.rollout.RolloutOutcome;
import io.servegate.sim.rollout.RolloutRun;
import io.servegate.sim.rollout.SimVersion;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/sim rollout}: one rollout of a candidate version against a baseline
 * ({@link RolloutRun}), with the guards an operator would pass to {@code start_rollout}; prints
 * the decisions and how much of the traffic the candidate answered.
 */
@Command(name = "rollout", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Simulates a safe rollout (shadow or canary) of a candidate version and prints its decisions.")
final class RolloutCommand implements Callable<Integer> {

    @Option(names = "--baseline", split = ",", defaultValue = "0.9,10,10",
            description = "baseline ACCURACY,FIXED_MS,TAIL_MS (latency = fixed + exponential tail) (default: ${DEFAULT-VALUE})")
    List<Double> baseline;

    @Option(names = "--candidate", split = ",", defaultValue = "0.8,10,10",
            description = "candidate ACCURACY,FIXED_MS,TAIL_MS[,COLD_ANSWERS,COLD_MS] (its first COLD_ANSWERS "
                    + "answers take COLD_MS longer) (default: ${DEFAULT-VALUE})")
    List<Double> candidate;

    @Option(names = "--mode", defaultValue = "canary", description = "shadow or canary (default: ${DEFAULT-VALUE})")
    String mode;

    @Option(names = "--steps", split = ",", defaultValue = "0.01,0.05,0.25,0.5,1",
            description = "candidate shares (one copy fraction for shadow) (default: ${DEFAULT-VALUE})")
    List<Double> steps;

    @Option(names = "--rate", defaultValue = "1000", description = "queries per second (default: ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--users", defaultValue = "20000", description = "distinct uids (default: ${DEFAULT-VALUE})")
    int users;

    @Option(names = "--slo-ms", defaultValue = "100", description = "the app's SLO (default: ${DEFAULT-VALUE})")
    double sloMs;

    @Option(names = "--feedback-delay-ms", defaultValue = "5000",
            description = "delay of a feedback label (default: ${DEFAULT-VALUE})")
    long feedbackDelayMs;

    @Option(names = "--feedback-fraction", defaultValue = "0.5",
            description = "fraction of queries labelled (default: ${DEFAULT-VALUE})")
    double feedbackFraction;

    @Option(names = "--max-slo-miss-increase", defaultValue = "0.01", description = "guard (default: ${DEFAULT-VALUE})")
    double maxSloMissIncrease;

    @Option(names = "--max-error-rate", defaultValue = "0.01", description = "guard (default: ${DEFAULT-VALUE})")
    double maxErrorRate;

    @Option(names = "--max-loss-increase", defaultValue = "0.02", description = "guard (default: ${DEFAULT-VALUE})")
    double maxLossIncrease;

    @Option(names = "--min-feedback", defaultValue = "200", description = "guard (default: ${DEFAULT-VALUE})")
    long minFeedback;

    @Option(names = "--confidence", defaultValue = "0.99", description = "of each decision (default: ${DEFAULT-VALUE})")
    double confidence;

    @Option(names = "--min-step-queries", defaultValue = "100", description = "per step (default: ${DEFAULT-VALUE})")
    long minStepQueries;

    @Option(names = "--min-step-ms", defaultValue = "10000", description = "per step (default: ${DEFAULT-VALUE})")
    long minStepMs;

    @Option(names = "--warmup-queries", defaultValue = "200",
            description = "copies the candidate answers before the first step (default: ${DEFAULT-VALUE})")
    long warmupQueries;

    @Option(names = "--duration-s", defaultValue = "3600", description = "longest run (default: ${DEFAULT-VALUE})")
    long durationS;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--json", description = "write the JSON summary to this file")
    Path json;

    @Override
    public Integer call() throws Exception {
        Guards guards = new Guards(maxSloMissIncrease, maxErrorRate, maxLossIncrease, minFeedback, confidence,
                minStepQueries, minStepMs, warmupQueries);
        Rollout start = Rollout.start("sim", "model", "2", "1", RolloutMode.parse(mode), Task.CLASSIFICATION, 1,
                guards, steps, 0);
        RolloutRun run = new RolloutRun(version("--baseline", baseline), version("--candidate", candidate), rate,
                users, sloMs, feedbackDelayMs, feedbackFraction, seed);
        RolloutOutcome o = run.run(start, durationS * 1000);
        for (Decision d : o.rollout().history()) {
            System.out.printf(Locale.ROOT, "%9.1f s  %-8s %5.1f%% -> %5.1f%%  %s%n", d.atMillis() / 1000.0, d.kind(),
                    100 * d.fromShare(), 100 * d.toShare(), d.reason());
        }
        System.out.printf(Locale.ROOT, "%s after %.1f s; candidate answered %d of %d queries (%.2f%%)%n",
                o.rollout().status(), o.finishedAtMillis() / 1000.0, o.candidateAnswers(), o.queries(),
                100 * o.candidateFraction());
        if (json != null) {
            Summary.write(summary(o), json);
        }
        return 0;
    }

    private static SimVersion version(String option, List<Double> v) {
        if (v.size() != 3 && v.size() != 5) {
            throw new IllegalArgumentException(option + " must be ACCURACY,FIXED_MS,TAIL_MS[,COLD_ANSWERS,COLD_MS], got "
                    + v);
        }
        return v.size() == 3 ? new SimVersion(v.get(0), v.get(1), v.get(2))
                : new SimVersion(v.get(0), v.get(1), v.get(2), v.get(3).longValue(), v.get(4));
    }

    private Map<String, Object> summary(RolloutOutcome o) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("baseline", baseline);
        settings.put("candidate", candidate);
        settings.put("mode", mode);
        settings.put("steps", steps);
        settings.put("rate", rate);
        settings.put("users", users);
        settings.put("slo_ms", sloMs);
        settings.put("feedback_delay_ms", feedbackDelayMs);
        settings.put("feedback_fraction", feedbackFraction);
        settings.put("guards", o.rollout().guards());
        settings.put("seed", seed);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("status", o.rollout().status());
        result.put("finished_at_ms", o.finishedAtMillis());
        result.put("queries", o.queries());
        result.put("candidate_answers", o.candidateAnswers());
        result.put("history", o.rollout().history());
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("settings", settings);
        summary.put("result", result);
        return summary;
    }
}
