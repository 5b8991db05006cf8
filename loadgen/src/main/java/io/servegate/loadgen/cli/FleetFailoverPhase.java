package io.servegate.loadgen.cli;

import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.FeedbackStream;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.RoundRobinWorkload;
import io.servegate.loadgen.load.TimelineWorkload;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The failover phase of {@code loadgen fleet}: Poisson load round robin across the fleet and
 * feedback to an app that learns from it, then {@code kill -9} of the gateway that owns the model
 * version (the client drops it at once, as a load balancer would). It reports when predictions
 * resumed, a per-second timeline, and the feedback acknowledged against the feedback stored.
 * Performance is reported, never asserted.
 */
final class FleetFailoverPhase {

    private final double rate;
    private final long sloNanos;
    private final int beforeKillS;
    private final int afterKillS;
    private final double feedbackRate;
    private final long seed;
    private final Duration timeout;
    private final PrintWriter err;

    /** @param timeout the client's per-request timeout, and how long answers may take after the load */
    FleetFailoverPhase(double rate, double sloMs, int beforeKillS, int afterKillS, double feedbackRate, long seed,
            Duration timeout, PrintWriter err) {
        this.rate = rate;
        this.sloNanos = Math.round(sloMs * 1e6);
        this.beforeKillS = beforeKillS;
        this.afterKillS = afterKillS;
        this.feedbackRate = feedbackRate;
        this.seed = seed;
        this.timeout = timeout;
        this.err = err;
    }

    /**
     * Runs the phase: {@code loads.get(i)} is gateway i's load, {@code owner} the index of the
     * version's owner, {@code feedbackApp} an app linked to the model that learns from feedback.
     */
    Map<String, Object> run(List<GatewayProcess> fleet, List<GatewayPredictWorkload> loads, int owner,
            String feedbackApp, int inputLength) throws Exception {
        RoundRobinWorkload spread = new RoundRobinWorkload(loads);
        long start = System.nanoTime();
        int seconds = beforeKillS + afterKillS;
        TimelineWorkload timeline = new TimelineWorkload(spread, start, sloNanos, seconds);
        List<Integer> ports = fleet.stream().map(GatewayProcess::port).toList();
        Map<String, Object> f = new LinkedHashMap<>();
        try (FeedbackStream feedback = new FeedbackStream(GatewayProcess.HOST, ports, feedbackApp,
                new RandomInputs(inputLength), timeout)) {
            feedback.start(feedbackRate);
            CompletableFuture<OpenLoopResult> load = CompletableFuture.supplyAsync(() -> {
                try {
                    return new OpenLoop(rate, Duration.ZERO, Duration.ofSeconds(seconds), timeout,
                            seed + 2).run(timeline);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            err.printf("%s: failover: %d s of load and %.0f feedback/s, then kill -9 of gw%d...%n",
                    FleetCommand.SCENARIO, beforeKillS, feedbackRate, owner);
            Thread.sleep(TimeUnit.SECONDS.toMillis(beforeKillS));
            spread.markDown(owner);
            feedback.markDown(owner);
            long killed = System.nanoTime();
            timeline.mark(killed);
            fleet.get(owner).kill();
            load.get(seconds + 60L, TimeUnit.SECONDS);
            feedback.stop(Duration.ofSeconds(10));
            int survivor = owner == 0 ? 1 : 0;
            FeedbackStream.Counts counts = feedback.counts();
            long stored = feedback.observations(survivor);
            double resumeS = timeline.firstPredictionAfterMark().isPresent()
                    ? (timeline.firstPredictionAfterMark().getAsLong() - killed) / 1e9 : Double.NaN;
            f.put("killed", "gw" + owner);
            f.put("killed_at_s", (killed - start) / 1e9);
            f.put("predictions_resumed_after_s", resumeS);
            f.put("fleet_after", fleet.get(survivor).admin().get("get_fleet"));
            f.put("feedback", counts);
            f.put("feedback_stored", stored);
            f.put("feedback_lost", Math.max(0, counts.acknowledged() - stored));
            f.put("timeline", timeline.seconds());
            err.printf("%s: failover: gw%d killed at %.1f s; predictions resumed %.2f s later; feedback %d acknowledged, "
                    + "%d stored, %d refused, %d unanswered%n", FleetCommand.SCENARIO, owner, (killed - start) / 1e9,
                    resumeS, counts.acknowledged(), stored, counts.refused(), counts.unanswered());
            FleetJoinPhase.printTimeline(err, timeline.seconds(), Map.of((int) ((killed - start) / 1_000_000_000L),
                    "<- kill -9"));
        }
        return f;
    }
}
