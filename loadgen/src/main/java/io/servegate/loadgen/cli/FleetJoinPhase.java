package io.servegate.loadgen.cli;

import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.RoundRobinWorkload;
import io.servegate.loadgen.load.TimelineWorkload;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The join phase of {@code loadgen fleet}: the live members of the fleet (the survivors of the
 * failover) take Poisson load round robin for a steady period; then one more gateway starts, and
 * once it reports ready ({@code /v2/health/ready}, as a load balancer's probe sees it) the client
 * adds it to its round robin. It reports, per second and for the first {@value #WINDOW_S} s from
 * the start of the new gateway and from its readiness, the share of queries lost (defaults,
 * failures, predictions after the SLO) against the steady period, the fleet as {@code get_fleet}
 * showed it before and after and every change of it in between (which versions moved, when), and
 * the load average at each step. Performance is reported, never asserted.
 */
final class FleetJoinPhase {

    /** The windows after the join, as issue and simulator count them. */
    static final int WINDOW_S = 10;
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    /** Starts a gateway of the fleet (its member name given) and returns once its admin port answers. */
    @FunctionalInterface
    interface Starter {
        GatewayProcess start(String name) throws IOException, InterruptedException;
    }

    private final double rate;
    private final long sloNanos;
    private final int steadyS;
    private final int afterReadyS;
    private final long seed;
    private final Duration readyTimeout;
    private final Duration drain;
    private final PrintWriter err;

    /**
     * @param steadyS load on the live members before the new gateway starts
     * @param afterReadyS load once the new gateway is ready, at least {@value #WINDOW_S}
     * @param readyTimeout how long the new gateway may take to report ready
     * @param drain how long answers may take (the client's request timeout)
     */
    FleetJoinPhase(double rate, double sloMs, int steadyS, int afterReadyS, long seed, Duration readyTimeout,
            Duration drain, PrintWriter err) {
        if (steadyS < 1 || afterReadyS < WINDOW_S) {
            throw new IllegalArgumentException("the join needs ≥ 1 s of steady load and ≥ " + WINDOW_S
                    + " s after the new gateway is ready, got " + steadyS + " and " + afterReadyS);
        }
        this.rate = rate;
        this.sloNanos = Math.round(sloMs * 1e6);
        this.steadyS = steadyS;
        this.afterReadyS = afterReadyS;
        this.seed = seed;
        this.readyTimeout = readyTimeout;
        this.drain = drain;
        this.err = err;
    }

    /**
     * Runs the phase on the live gateways of {@code fleet} (index i's load is {@code loads.get(i)});
     * the new gateway and its load are appended to both lists, so that the caller stops and
     * describes it with the others.
     */
    Map<String, Object> run(List<GatewayProcess> fleet, List<GatewayPredictWorkload> loads, Starter starter,
            Function<GatewayProcess, GatewayPredictWorkload> workloadOf) throws Exception {
        List<Integer> live = new ArrayList<>();
        for (int i = 0; i < fleet.size(); i++) {
            if (fleet.get(i).isAlive()) {
                live.add(i);
            }
        }
        List<String> names = new ArrayList<>(live.stream().map(i -> "gw" + i).toList());
        String joiner = "gw" + fleet.size();
        GatewayProcess watched = fleet.get(live.get(0));
        GatewayAdminClient admin = new GatewayAdminClient(GatewayProcess.HOST, watched.adminPort(),
                Duration.ofSeconds(5));
        RoundRobinWorkload spread = new RoundRobinWorkload(live.stream().map(loads::get).toList());
        int maxSeconds = steadyS + (int) (2 * readyTimeout.toSeconds()) + afterReadyS + 1;
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> loadAverage = new LinkedHashMap<>();
        out.put("members_before", List.copyOf(names));
        out.put("joiner", joiner);
        out.put("fleet_before", admin.get("get_fleet"));
        long start = System.nanoTime();
        TimelineWorkload timeline = new TimelineWorkload(spread, start, sloNanos, maxSeconds);
        timeline.openWindow("steady", start, steadyS * SECOND);
        loadAverage.put("steady_start", RunConditions.now().loadAverage1m());
        Driver driver = new Driver(timeline, start);
        driver.thread.start();
        long started;
        long ready;
        try (FleetWatch watch = new FleetWatch(admin, start, 250)) {
            err.printf("%s: join: %s take %.0f/s round robin for %d s, then %s starts...%n", FleetCommand.SCENARIO,
                    names, rate, steadyS, joiner);
            sleepUntil(start + steadyS * SECOND);
            loadAverage.put("join_start", RunConditions.now().loadAverage1m());
            started = System.nanoTime();
            timeline.openWindow("first_" + WINDOW_S + "s_from_start", started, WINDOW_S * SECOND);
            GatewayProcess g = starter.start(joiner);
            fleet.add(g);
            GatewayPredictWorkload w = workloadOf.apply(g);
            loads.add(w);
            g.awaitHealthReady(readyTimeout);
            ready = System.nanoTime();
            timeline.openWindow("first_" + WINDOW_S + "s_from_ready", ready, WINDOW_S * SECOND);
            int joined = spread.add(w);
            names.add(joiner);
            loadAverage.put("ready", RunConditions.now().loadAverage1m());
            err.printf("%s: join: %s ready %.2f s after its start (%.1f s into the phase); now in the round robin%n",
                    FleetCommand.SCENARIO, joiner, (ready - started) / 1e9, (ready - start) / 1e9);
            sleepUntil(ready + afterReadyS * SECOND);
            driver.stop();
            awaitAnswers(timeline);
            loadAverage.put("end", RunConditions.now().loadAverage1m());
            out.put("ownership_changes", watch.changes());
            out.put("fleet_after", admin.get("get_fleet"));
            Map<String, Object> p50 = new LinkedHashMap<>();
            for (int i = 0; i <= joined; i++) {
                LatencySummary s = spread.predictedLatency(i);
                p50.put(names.get(i), s == null ? Double.NaN : s.p50Ms());
            }
            out.put("prediction_p50_ms_by_gateway", p50);
        } finally {
            driver.stop();
        }
        out.put("join_started_at_s", (started - start) / 1e9);
        out.put("ready_at_s", (ready - start) / 1e9);
        out.put("start_to_ready_s", (ready - started) / 1e9);
        out.put("load_average_1m", loadAverage);
        List<TimelineWorkload.Window> windows = timeline.windows();
        TimelineWorkload.Window steady = windows.get(0);
        for (TimelineWorkload.Window w : windows) {
            out.put(w.name(), window(w, steady));
        }
        int loaded = (int) ((ready - start) / SECOND) + afterReadyS + 1;
        List<TimelineWorkload.Second> seconds = timeline.seconds().subList(0, Math.min(maxSeconds, loaded));
        out.put("timeline", seconds);
        printSummary(out, windows, steady);
        printTimeline(err, seconds, Map.of((int) ((started - start) / SECOND), "<- " + joiner + " starts",
                (int) ((ready - start) / SECOND), "<- " + joiner + " ready"));
        return out;
    }

    /** A window's counts, its lost share and how much that exceeds the steady period's. */
    static Map<String, Object> window(TimelineWorkload.Window w, TimelineWorkload.Window steady) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("from_s", w.fromS());
        m.put("length_s", w.lengthS());
        m.put("sent", w.sent());
        m.put("in_slo", w.inSlo());
        m.put("late", w.late());
        m.put("defaults", w.defaults());
        m.put("failed", w.failed());
        m.put("unanswered", w.sent() - w.answered());
        m.put("lost_share", w.lostShare());
        m.put("lost_share_over_steady", w.lostShare() - steady.lostShare());
        return m;
    }

    private void printSummary(Map<String, Object> out, List<TimelineWorkload.Window> windows,
            TimelineWorkload.Window steady) {
        for (TimelineWorkload.Window w : windows) {
            err.printf("%s: join: %-22s %6d sent, %6d in SLO, %5d late, %5d defaults, %5d failed: lost %.2f %% "
                    + "(%+.2f points over steady)%n", FleetCommand.SCENARIO, w.name(), w.sent(), w.inSlo(), w.late(),
                    w.defaults(), w.failed(), 100 * w.lostShare(), 100 * (w.lostShare() - steady.lostShare()));
        }
        err.printf("%s: join: prediction p50 by gateway %s; load average (1 min) %s%n", FleetCommand.SCENARIO,
                out.get("prediction_p50_ms_by_gateway"), out.get("load_average_1m"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> changes = (List<Map<String, Object>>) out.get("ownership_changes");
        for (Map<String, Object> c : changes) {
            err.printf("%s: join: at %6.2f s the fleet was %s, versions %s%n", FleetCommand.SCENARIO, c.get("at_s"),
                    c.get("members"), c.get("versions"));
        }
    }

    /** A per-second timeline, with a note on the seconds in {@code notes}. */
    static void printTimeline(PrintWriter err, List<TimelineWorkload.Second> seconds, Map<Integer, String> notes) {
        err.printf("%s: %6s %6s %7s %6s %8s %6s%n", FleetCommand.SCENARIO, "second", "sent", "in SLO", "late",
                "defaults", "failed");
        for (TimelineWorkload.Second s : seconds) {
            err.printf("%s: %6d %6d %7d %6d %8d %6d%s%n", FleetCommand.SCENARIO, s.second(), s.sent(), s.inSlo(),
                    s.late(), s.defaults(), s.failed(), notes.containsKey(s.second()) ? "  " + notes.get(s.second())
                            : "");
        }
    }

    /** Waits until every request sent has its answer, or for the drain time. */
    private void awaitAnswers(TimelineWorkload timeline) throws InterruptedException {
        long until = System.nanoTime() + drain.toNanos() + SECOND;
        while (System.nanoTime() < until && timeline.windows().stream().anyMatch(w -> w.answered() < w.sent())) {
            Thread.sleep(20);
        }
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
    }

    /**
     * The load, open loop, until stopped: one-second Poisson schedules back to back (each starts
     * where the last one's second ends, so together they are one Poisson process), because the
     * phase's length is known only once the new gateway is ready.
     */
    private final class Driver implements Runnable {
        final Thread thread = new Thread(this, "join-load");
        private final TimelineWorkload timeline;
        private final long start;
        private volatile boolean stopped;
        private volatile Exception failure;

        Driver(TimelineWorkload timeline, long start) {
            this.timeline = timeline;
            this.start = start;
            thread.setDaemon(true);
        }

        @Override
        public void run() {
            try {
                for (long k = 0; !stopped; k++) {
                    new OpenLoop(rate, Duration.ZERO, Duration.ofSeconds(1), Duration.ZERO, seed + 3000 + k)
                            .run(timeline);
                    long next = start + (k + 1) * SECOND;
                    long now;
                    while ((now = System.nanoTime()) < next) {
                        LockSupport.parkNanos(next - now);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        void stop() throws InterruptedException {
            stopped = true;
            thread.join(TimeUnit.SECONDS.toMillis(5));
            if (failure != null) {
                throw new IllegalStateException("the join's load failed", failure);
            }
        }
    }
}
