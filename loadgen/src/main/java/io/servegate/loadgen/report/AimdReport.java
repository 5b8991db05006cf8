package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.TimerJitter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The gateway's AIMD batch sizing checked against the analytic optimum of an emulated container
 * whose batch of b takes β + α·b ms: b* = floor((SLO − β) / α). Written as JSON and printed.
 *
 * @param benchmark {@code aimd}
 * @param startedAt ISO-8601 instant
 * @param settings the command's options
 * @param environment the load generator's machine and JVM
 * @param gateway the gateway child process: command, ports, log, problems seen in its log
 * @param analytic the cost model and its optimum
 * @param lastHalf the AIMD maximum batch size over the last half of the measured window
 * @param load the open-loop run (latency from intended send time, all answers)
 * @param answers predictions, defaults by explanation, and answers later than SLO + tolerance
 * @param gatewaySide the measured run from inside the gateway (its metrics): latency from arrival in the handler,
 *     batch sizes; null if not scraped
 * @param machineFloor the control: how late a bare timer thread in a JVM of its own ran over the same window; null
 *     when not run
 * @param clientKeptUp whether the load generator sent at the scheduled rate (achieved ≥ 97% and p99 send lag ≤ 2 ms)
 * @param clientNote a sentence on the above
 * @param series every poll of get_all_containers: seconds since the start of the measured window (negative during
 *     warm-up), max_batch_size, queue_length
 */
public record AimdReport(String benchmark, String startedAt, Map<String, Object> settings,
        Map<String, Object> environment, Map<String, Object> gateway, Analytic analytic, BatchSizeStats lastHalf,
        OpenLoopResult load, AnswerTally.Counts answers, GatewayMetrics.Summary gatewaySide,
        TimerJitter.Result machineFloor, boolean clientKeptUp, String clientNote,
        List<Sample> series) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * @param betaMs the emulated batch's fixed cost
     * @param alphaMs its cost per input
     * @param sloMs the app's latency SLO
     * @param bStar floor((SLO − β) / α), the largest batch whose service time meets the SLO
     * @param capacityAtBStarPerSec b* / (β + α·b*) · 1000, the container's throughput at that batch size
     */
    public record Analytic(double betaMs, double alphaMs, double sloMs, int bStar, double capacityAtBStarPerSec) {

        public static Analytic of(double betaMs, double alphaMs, double sloMs) {
            // the small epsilon keeps e.g. (20 - 5) / 0.5 = 30 from flooring to 29 on rounding
            int bStar = (int) Math.floor((sloMs - betaMs) / alphaMs + 1e-9);
            double capacity = bStar < 1 ? 0 : bStar / (betaMs + alphaMs * bStar) * 1000;
            return new Analytic(betaMs, alphaMs, sloMs, bStar, capacity);
        }
    }

    /**
     * @param fromS start of the half, seconds into the measured window
     * @param toS its end
     * @param samples polls in it
     * @param mean mean max_batch_size
     * @param min smallest
     * @param max largest
     * @param relativeError |mean − b*| / b*
     */
    public record BatchSizeStats(double fromS, double toS, int samples, Double mean, Integer min, Integer max,
            Double relativeError) {

        public static BatchSizeStats of(List<Sample> series, double fromS, double toS, int bStar) {
            List<Sample> in = series.stream().filter(s -> s.tS() >= fromS && s.tS() <= toS && s.maxBatchSize() > 0)
                    .toList();
            if (in.isEmpty()) {
                return new BatchSizeStats(fromS, toS, 0, null, null, null, null);
            }
            double mean = in.stream().mapToInt(Sample::maxBatchSize).average().orElseThrow();
            int min = in.stream().mapToInt(Sample::maxBatchSize).min().orElseThrow();
            int max = in.stream().mapToInt(Sample::maxBatchSize).max().orElseThrow();
            return new BatchSizeStats(fromS, toS, in.size(), mean, min, max,
                    bStar > 0 ? Math.abs(mean - bStar) / bStar : null);
        }
    }

    /** One poll of the replica's status; maxBatchSize -1 when the gateway did not list it. */
    public record Sample(double tS, int maxBatchSize, int queueLength) {
    }

    /** Writes the report as {@code dir/<benchmark>.json}, creating dir, and returns the file. */
    public Path writeJson(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(benchmark + ".json");
        JSON.writeValue(file.toFile(), this);
        return file;
    }

    /** Reads a report written by {@link #writeJson}. */
    public static AimdReport readJson(Path file) throws IOException {
        return JSON.readValue(file.toFile(), AimdReport.class);
    }

    /** The results for people. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        Analytic a = analytic;
        sb.append(String.format(Locale.ROOT, "emulated container: beta %.3f ms, alpha %.3f ms; SLO %.1f ms -> b* = %d "
                + "(capacity %.0f inputs/s)%n", a.betaMs(), a.alphaMs(), a.sloMs(), a.bStar(), a.capacityAtBStarPerSec()));
        BatchSizeStats b = lastHalf;
        sb.append(String.format(Locale.ROOT, "AIMD max_batch_size, %.1f..%.1f s (%d polls): mean %s, min %s, max %s; "
                + "|mean - b*| / b* = %s%n", b.fromS(), b.toS(), b.samples(), num(b.mean()), b.min(), b.max(),
                b.relativeError() == null ? "-" : String.format(Locale.ROOT, "%.1f%%", b.relativeError() * 100)));
        OpenLoopResult l = load;
        sb.append(String.format(Locale.ROOT, "offered %.0f req/s (scheduled %.1f), sent %.1f req/s, send lag p99 %.3f "
                + "ms, max %.3f ms%s%n", l.offeredRate(), l.scheduledRate(), l.achievedSendRate(), l.sendLagP99Ms(),
                l.sendLagMaxMs(), clientKeptUp ? "" : "  <- the load generator did not keep up"));
        sb.append(String.format(Locale.ROOT, "answers %d (predictions %d, defaults %d), errors %d, unanswered %d%n",
                l.requests(), answers.predictions(), answers.defaults(), l.errors(), l.unanswered()));
        answers.defaultsByExplanation().forEach((why, n) -> sb.append(String.format(Locale.ROOT,
                "  default x%d: %s%n", n, why)));
        LatencySummary s = l.latency();
        sb.append(String.format(Locale.ROOT, "latency from intended send, all answers: p50 %s ms, p99 %s ms, "
                + "p99.9 %s ms, max %s ms; later than %.1f ms: %d%n", num(s == null ? null : s.p50Ms()),
                num(s == null ? null : s.p99Ms()), num(s == null ? null : s.p999Ms()),
                num(s == null ? null : s.maxMs()), answers.lateThresholdMs(), answers.late()));
        GatewayMetrics.Summary g = gatewaySide;
        if (g != null) {
            sb.append(String.format(Locale.ROOT, "inside the gateway (its metrics, from arrival in the handler): mean %s "
                    + "ms, p50 <= %s ms, p99 <= %s ms, %d answers after the SLO; %d batches of %s inputs on average; "
                    + "CPU %s ms per query; %d GC pauses, %.1f ms in all%n",
                    num(g.meanMs()), num(g.p50UpperMs()), num(g.p99UpperMs()), g.lateAnswers(), g.batches(),
                    num(g.meanBatchSize()), num(g.cpuMsPerQuery()), g.gcPauses(), g.gcPauseMs()));
            sb.append(String.format(Locale.ROOT, "its deadline timers: %d ran, later than about 1/2/4 ms: %d/%d/%d "
                    + "(%.2f%% > 2 ms)%n", g.deadlineTimers(), g.deadlineTimersLate()[0], g.deadlineTimersLate()[1],
                    g.deadlineTimersLate()[2],
                    g.deadlineTimers() == 0 ? 0.0 : 100.0 * g.deadlineTimersLate()[1] / g.deadlineTimers()));
        }
        TimerJitter.Result f = machineFloor;
        if (f != null) {
            sb.append(String.format(Locale.ROOT, "machine floor (a bare timer thread in its own JVM, same window): "
                    + "%d timers, later than 1/2/4 ms: %d/%d/%d (%.2f%% > 2 ms), p99.9 %.3f ms, max %.3f ms%n",
                    f.timers(), f.over1Ms(), f.over2Ms(), f.over4Ms(), 100 * f.over2MsShare(), f.p999Ms(), f.maxMs()));
        }
        return sb.toString();
    }

    private static String num(Double v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.3f", v);
    }
}
