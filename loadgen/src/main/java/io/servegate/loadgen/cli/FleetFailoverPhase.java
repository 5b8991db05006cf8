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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The failover phase of {@code loadgen fleet}: Poisson load round robin across the fleet and
 * feedback to an app that learns from it, then the gateway that owns the model version is stopped,
 * by {@code kill -9} (a crash) or SIGTERM (a graceful shutdown, which hands its versions off
 * first); the client drops it at once, as a load balancer would. It reports when predictions
 * resumed, the share of queries lost in the 10 s after the stop against the period before it, a
 * per-second timeline, what was lost in each 100 ms around the stop, and the feedback
 * acknowledged against the feedback stored. Performance is
 * reported, never asserted.
 */
final class FleetFailoverPhase {

    /** How the owner is stopped. */
    enum Stop {
        /** {@code kill -9}: nothing of it runs afterwards, its versions move once its lease ran out. */
        kill,
        /** SIGTERM: it drains, handing its versions off, then leaves and shuts down. */
        term
    }

    /** The window after the stop whose lost share is reported, in seconds. */
    private static final int WINDOW_S = 10;
    /** The stop's own moments, in steps of this: the signal, the hand-off and the first batches after it. */
    private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Steps counted before the planned stop, and from it on. */
    private static final int STEPS_BEFORE = 5;
    private static final int STEPS_AFTER = 15;
    private static final String STEP = "step ";

    private final double rate;
    private final long sloNanos;
    private final int beforeKillS;
    private final int afterKillS;
    private final double feedbackRate;
    private final Stop stop;
    private final long seed;
    private final Duration timeout;
    private final PrintWriter err;

    /** @param timeout the client's per-request timeout, and how long answers may take after the load */
    FleetFailoverPhase(double rate, double sloMs, int beforeKillS, int afterKillS, double feedbackRate, Stop stop,
            long seed, Duration timeout, PrintWriter err) {
        this.rate = rate;
        this.sloNanos = Math.round(sloMs * 1e6);
        this.beforeKillS = beforeKillS;
        this.afterKillS = afterKillS;
        this.feedbackRate = feedbackRate;
        this.stop = stop;
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
        timeline.openWindow("before the stop", start, TimeUnit.SECONDS.toNanos(beforeKillS));
        long plannedStop = start + TimeUnit.SECONDS.toNanos(beforeKillS);
        for (int i = -STEPS_BEFORE; i < STEPS_AFTER; i++) {
            timeline.openWindow(STEP + i, plannedStop + i * STEP_NANOS, STEP_NANOS);
        }
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
            String how = stop == Stop.kill ? "kill -9" : "SIGTERM";
            err.printf("%s: failover: %d s of load and %.0f feedback/s, then %s of gw%d...%n",
                    FleetCommand.SCENARIO, beforeKillS, feedbackRate, how, owner);
            Thread.sleep(TimeUnit.SECONDS.toMillis(beforeKillS));
            spread.markDown(owner);
            feedback.markDown(owner);
            long stopped = System.nanoTime();
            timeline.mark(stopped);
            timeline.openWindow("first " + WINDOW_S + " s after the stop", stopped,
                    TimeUnit.SECONDS.toNanos(Math.min(WINDOW_S, afterKillS)));
            if (stop == Stop.kill) {
                fleet.get(owner).kill();
            } else {
                fleet.get(owner).terminate();
            }
            load.get(seconds + 60L, TimeUnit.SECONDS);
            feedback.stop(Duration.ofSeconds(10));
            int survivor = owner == 0 ? 1 : 0;
            FeedbackStream.Counts counts = feedback.counts();
            long stored = feedback.observations(survivor);
            double resumeS = timeline.firstPredictionAfterMark().isPresent()
                    ? (timeline.firstPredictionAfterMark().getAsLong() - stopped) / 1e9 : Double.NaN;
            f.put("stopped", "gw" + owner);
            f.put("stopped_by", how);
            f.put("stopped_at_s", (stopped - start) / 1e9);
            f.put("predictions_resumed_after_s", resumeS);
            f.put("fleet_after", fleet.get(survivor).admin().get("get_fleet"));
            f.put("feedback", counts);
            f.put("feedback_stored", stored);
            f.put("feedback_lost", Math.max(0, counts.acknowledged() - stored));
            List<TimelineWorkload.Window> windows = timeline.windows().stream()
                    .filter(w -> !w.name().startsWith(STEP)).toList();
            Map<String, Object> lost = new LinkedHashMap<>();
            for (TimelineWorkload.Window w : windows) {
                lost.put(w.name(), FleetJoinPhase.window(w, windows.get(0)));
                err.printf("%s: failover: %-26s %6d sent, %6d in SLO, %5d late, %5d defaults, %5d failed: lost %.2f %%%n",
                        FleetCommand.SCENARIO, w.name(), w.sent(), w.inSlo(), w.late(), w.defaults(), w.failed(),
                        100 * w.lostShare());
            }
            f.put("windows", lost);
            f.put("timeline", timeline.seconds());
            err.printf("%s: failover: gw%d stopped (%s) at %.1f s; predictions resumed %.2f s later; feedback %d "
                    + "acknowledged, %d stored, %d refused, %d unanswered%n", FleetCommand.SCENARIO, owner, how,
                    (stopped - start) / 1e9, resumeS, counts.acknowledged(), stored, counts.refused(),
                    counts.unanswered());
            FleetJoinPhase.printTimeline(err, timeline.seconds(), Map.of((int) ((stopped - start) / 1_000_000_000L),
                    "<- " + how));
            f.put("around_the_stop", steps(timeline, stopped - plannedStop));
        }
        return f;
    }

    /**
     * The queries sent in each 100 ms around the stop and those of them not predicted within the
     * SLO, printed on one line each way; {@code lateNanos} is how long after its planned moment the
     * stop came.
     */
    private List<Map<String, Object>> steps(TimelineWorkload timeline, long lateNanos) {
        List<Map<String, Object>> out = new ArrayList<>();
        StringBuilder sent = new StringBuilder();
        StringBuilder lost = new StringBuilder();
        for (TimelineWorkload.Window w : timeline.windows()) {
            if (w.name().startsWith(STEP)) {
                int step = Integer.parseInt(w.name().substring(STEP.length()));
                long notInSlo = w.sent() - w.inSlo();
                out.add(Map.of("from_ms", step * 100, "sent", w.sent(), "lost", notInSlo));
                sent.append(String.format(" %4d", w.sent()));
                lost.append(String.format(" %4d", notInSlo));
            }
        }
        err.printf("%s: failover: per 100 ms from %d ms before the stop (it came %.0f ms after its planned moment):%n"
                + "%s: failover:   sent%s%n%s: failover:   lost%s%n", FleetCommand.SCENARIO, STEPS_BEFORE * 100,
                lateNanos / 1e6, FleetCommand.SCENARIO, sent, FleetCommand.SCENARIO, lost);
        return out;
    }
}
