package io.servegate.loadgen;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The noop container measured directly and through the gateway in the same run, side by side:
 * closed loop, then open loop at fixed rates. Ratios are gateway / direct (throughput below 1 and
 * latency above 1 are the gateway's overhead). Written as JSON and printed as a table.
 *
 * @param benchmark {@code gateway-overhead}
 * @param startedAt ISO-8601 instant
 * @param settings the command's options
 * @param environment the load generator's machine and JVM
 * @param gateway the gateway child process: command, ports, log, problems seen in its log
 * @param closedLoop the closed-loop pair
 * @param openLoop one pair per offered rate
 */
public record GatewayOverheadReport(String benchmark, String startedAt, Map<String, Object> settings,
        Map<String, Object> environment, Map<String, Object> gateway, ClosedLoopPair closedLoop,
        List<OpenLoopPair> openLoop) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * @param clients closed-loop clients per leg
     * @param direct ModelInfer of one input straight at the container
     * @param gateway {@code POST /{app}/predict} of one input through the gateway
     * @param gatewayAnswers the gateway leg's predictions and defaults
     * @param gatewaySide the gateway leg from inside the gateway (its metrics), null if not scraped
     * @param gatewayOverDirect ratios gateway / direct
     */
    public record ClosedLoopPair(int clients, LoadResult direct, LoadResult gateway, AnswerTally.Counts gatewayAnswers,
            GatewayMetrics.Summary gatewaySide, Ratios gatewayOverDirect) {
    }

    /**
     * @param rate offered requests per second, Poisson arrivals
     * @param direct ModelInfer of one input straight at the container
     * @param gateway {@code POST /{app}/predict} through the gateway
     * @param gatewayAnswers the gateway leg's predictions and defaults
     * @param gatewaySide the gateway leg from inside the gateway (its metrics), null if not scraped
     * @param gatewayOverDirect ratios gateway / direct
     */
    public record OpenLoopPair(double rate, OpenLoopResult direct, OpenLoopResult gateway,
            AnswerTally.Counts gatewayAnswers, GatewayMetrics.Summary gatewaySide, Ratios gatewayOverDirect) {
    }

    /** Gateway / direct; null where a side had no answers. */
    public record Ratios(Double throughput, Double p50, Double p99) {

        static Ratios of(double gatewayRate, double directRate, LatencySummary gateway, LatencySummary direct) {
            return new Ratios(ratio(gatewayRate, directRate),
                    gateway == null || direct == null ? null : ratio(gateway.p50Ms(), direct.p50Ms()),
                    gateway == null || direct == null ? null : ratio(gateway.p99Ms(), direct.p99Ms()));
        }

        private static Double ratio(double a, double b) {
            return b > 0 ? a / b : null;
        }
    }

    /** Writes the report as {@code dir/<benchmark>.json}, creating dir, and returns the file. */
    public Path writeJson(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(benchmark + ".json");
        JSON.writeValue(file.toFile(), this);
        return file;
    }

    /** Reads a report written by {@link #writeJson}. */
    public static GatewayOverheadReport readJson(Path file) throws IOException {
        return JSON.readValue(file.toFile(), GatewayOverheadReport.class);
    }

    /** The results as fixed-width tables. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        ClosedLoopPair c = closedLoop;
        sb.append(String.format(Locale.ROOT, "closed loop, %d clients, %.1f s measured per leg%n", c.clients(),
                c.direct().durationS()));
        sb.append(String.format(Locale.ROOT, "%-15s %10s %9s %9s %9s %9s %8s %9s%n", "leg", "req/s", "p50 ms",
                "p99 ms", "p99.9 ms", "max ms", "errors", "defaults"));
        closedRow(sb, "direct", c.direct(), "-");
        closedRow(sb, "gateway", c.gateway(), String.valueOf(c.gatewayAnswers().defaults()));
        sb.append(String.format(Locale.ROOT, "%-15s %10s %9s %9s%n", "gateway/direct", x(c.gatewayOverDirect()
                .throughput()), x(c.gatewayOverDirect().p50()), x(c.gatewayOverDirect().p99())));
        inside(sb, "", c.gatewaySide());
        if (!openLoop.isEmpty()) {
            sb.append(String.format(Locale.ROOT, "%nopen loop, Poisson arrivals, latency from the intended send time, "
                    + "%.1f s measured per leg%n", openLoop.get(0).direct().durationS()));
            sb.append(String.format(Locale.ROOT, "%7s %-15s %9s %9s %9s %9s %9s %9s %7s %7s %8s %10s%n", "rate", "leg",
                    "sent/s", "answer/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "missed", "defaults",
                    "lag99 ms"));
            for (OpenLoopPair p : openLoop) {
                openRow(sb, p.rate(), "direct", p.direct(), "-");
                openRow(sb, p.rate(), "gateway", p.gateway(), String.valueOf(p.gatewayAnswers().defaults()));
                sb.append(String.format(Locale.ROOT, "%7.0f %-15s %9s %9s %9s %9s%n", p.rate(), "gateway/direct", "",
                        x(p.gatewayOverDirect().throughput()), x(p.gatewayOverDirect().p50()),
                        x(p.gatewayOverDirect().p99())));
                inside(sb, String.format(Locale.ROOT, "%7.0f ", p.rate()), p.gatewaySide());
            }
        }
        return sb.toString();
    }

    /** The gateway's own view of a leg: its handler-to-answer latency and batch sizes. */
    private static void inside(StringBuilder sb, String prefix, GatewayMetrics.Summary g) {
        if (g == null) {
            return;
        }
        sb.append(String.format(Locale.ROOT, "%s%-15s mean %s ms, p50 <= %s ms, p99 <= %s ms (gateway metrics, from "
                + "arrival in the handler); %d batches of %s inputs on average%n", prefix, "inside gateway",
                ms(g.meanMs()), ms(g.p50UpperMs()), ms(g.p99UpperMs()), g.batches(), ms(g.meanBatchSize())));
    }

    private static void closedRow(StringBuilder sb, String leg, LoadResult r, String defaults) {
        LatencySummary l = r.latency();
        sb.append(String.format(Locale.ROOT, "%-15s %10.1f %9s %9s %9s %9s %8d %9s%n", leg, r.requestsPerSec(),
                ms(l == null ? null : l.p50Ms()), ms(l == null ? null : l.p99Ms()), ms(l == null ? null : l.p999Ms()),
                ms(l == null ? null : l.maxMs()), r.errors(), defaults));
    }

    private static void openRow(StringBuilder sb, double rate, String leg, OpenLoopResult r, String defaults) {
        LatencySummary l = r.latency();
        sb.append(String.format(Locale.ROOT, "%7.0f %-15s %9.1f %9.1f %9s %9s %9s %9s %7d %7d %8s %10.3f%n", rate,
                leg, r.achievedSendRate(), r.requestsPerSec(), ms(l == null ? null : l.p50Ms()),
                ms(l == null ? null : l.p99Ms()), ms(l == null ? null : l.p999Ms()), ms(l == null ? null : l.maxMs()),
                r.errors(), r.unanswered(), defaults, r.sendLagP99Ms()));
    }

    private static String ms(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.3f", value);
    }

    private static String x(Double ratio) {
        return ratio == null ? "-" : String.format(Locale.ROOT, "%.2fx", ratio);
    }
}
