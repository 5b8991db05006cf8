package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.LoadResult;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
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
     * @param directAnswers the direct leg's answers and goodput (within the SLO)
     * @param gatewayAnswers the gateway leg's predictions, defaults and goodput
     * @param gatewaySide the gateway leg from inside the gateway (its metrics), null if not scraped
     * @param gatewayOverDirect ratios gateway / direct
     */
    public record ClosedLoopPair(int clients, LoadResult direct, LoadResult gateway, AnswerTally.Counts directAnswers,
            AnswerTally.Counts gatewayAnswers,
            GatewayMetrics.Summary gatewaySide, Ratios gatewayOverDirect) {
    }

    /**
     * @param rate offered requests per second
     * @param direct ModelInfer of one input straight at the container
     * @param gateway {@code POST /{app}/predict} through the gateway
     * @param directAnswers the direct leg's answers and goodput (within the SLO)
     * @param gatewayAnswers the gateway leg's predictions, defaults and goodput
     * @param gatewaySide the gateway leg from inside the gateway (its metrics), null if not scraped
     * @param gatewayOverDirect ratios gateway / direct
     */
    public record OpenLoopPair(double rate, OpenLoopResult direct, OpenLoopResult gateway,
            AnswerTally.Counts directAnswers, AnswerTally.Counts gatewayAnswers, GatewayMetrics.Summary gatewaySide, Ratios gatewayOverDirect) {
    }

    /** Gateway / direct; null where a side had no answers. */
    public record Ratios(Double throughput, Double p50, Double p99) {

        public static Ratios of(double gatewayRate, double directRate, LatencySummary gateway, LatencySummary direct) {
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

    /**
     * Writes {@code dir/index.html} with the closed- and open-loop tables and plots of throughput
     * and latency, direct vs gateway ({@code throughput.png}, {@code latency.png}); returns the page.
     */
    public Path writeHtml(Path dir, Path json) throws IOException {
        HtmlReport page = new HtmlReport("Gateway overhead", "The noop container measured directly (OIP gRPC) and "
                + "through the gateway (Clipper REST, a child JVM) in the same run: closed loop (maximum throughput), "
                + "then open loop at fixed rates; ratios are gateway / direct.");
        List<String> headers = List.of("load", "leg", "sent/s", "answers/s", "goodput/s", "p50 ms", "p99 ms",
                "p99.9 ms", "errors", "missed", "defaults");
        List<List<Object>> rows = new java.util.ArrayList<>();
        ClosedLoopPair c = closedLoop;
        String closedName = "closed, " + c.clients() + " clients";
        rows.add(closedRow(closedName, "direct", c.direct(), c.directAnswers()));
        rows.add(closedRow(closedName, "gateway", c.gateway(), c.gatewayAnswers()));
        rows.add(ratioRow(closedName, c.gatewayOverDirect()));
        for (OpenLoopPair p : openLoop) {
            String name = String.format(Locale.ROOT, "open, %.0f/s", p.rate());
            rows.add(openRow(name, "direct", p.direct(), p.directAnswers()));
            rows.add(openRow(name, "gateway", p.gateway(), p.gatewayAnswers()));
            rows.add(ratioRow(name, p.gatewayOverDirect()));
        }
        page.heading("Direct vs gateway").table(headers, rows);
        page.paragraph("goodput: predictions (not defaults) within the SLO of " + settings.get("sloMs") + " ms; "
                + "open-loop latency counts from each request's intended send time.");
        List<String> cats = new java.util.ArrayList<>();
        List<Double> directRate = new java.util.ArrayList<>();
        List<Double> gatewayRate = new java.util.ArrayList<>();
        List<Double> directP50 = new java.util.ArrayList<>();
        List<Double> gatewayP50 = new java.util.ArrayList<>();
        List<Double> directP99 = new java.util.ArrayList<>();
        List<Double> gatewayP99 = new java.util.ArrayList<>();
        cats.add(closedName);
        directRate.add(c.direct().requestsPerSec());
        gatewayRate.add(c.gateway().requestsPerSec());
        directP50.add(p50(c.direct().latency()));
        gatewayP50.add(p50(c.gateway().latency()));
        directP99.add(p99(c.direct().latency()));
        gatewayP99.add(p99(c.gateway().latency()));
        for (OpenLoopPair p : openLoop) {
            cats.add(String.format(Locale.ROOT, "open, %.0f/s", p.rate()));
            directRate.add(p.direct().requestsPerSec());
            gatewayRate.add(p.gateway().requestsPerSec());
            directP50.add(p50(p.direct().latency()));
            gatewayP50.add(p50(p.gateway().latency()));
            directP99.add(p99(p.direct().latency()));
            gatewayP99.add(p99(p.gateway().latency()));
        }
        Map<String, List<Double>> tput = Charts.series();
        tput.put("direct", directRate);
        tput.put("gateway", gatewayRate);
        page.image(Charts.bars(dir.resolve("throughput.png"), "Answers per second, direct vs gateway", "answers/s",
                cats, tput), "throughput");
        Map<String, List<Double>> lat = Charts.series();
        lat.put("direct p50", directP50);
        lat.put("gateway p50", gatewayP50);
        lat.put("direct p99", directP99);
        lat.put("gateway p99", gatewayP99);
        page.image(Charts.bars(dir.resolve("latency.png"), "Latency, direct vs gateway", "ms", cats, lat), "latency");
        page.conditions(startedAt, environment).settings(settings).link(json, "all numbers (JSON)");
        page.paragraph("gateway: " + gateway.get("command") + "; log " + gateway.get("log") + " ("
                + gateway.get("logProblemLines") + " ERROR/WARN/exception lines)");
        return page.write(dir.resolve("index.html"));
    }

    private static List<Object> closedRow(String load, String leg, LoadResult r, AnswerTally.Counts a) {
        LatencySummary l = r.latency();
        return java.util.Arrays.asList(load, leg, (r.requests() + r.errors()) / r.durationS(), r.requestsPerSec(),
                a.goodput() / r.durationS(), p50(l), p99(l), l == null ? null : l.p999Ms(), r.errors(), 0L,
                a.defaults());
    }

    private static List<Object> openRow(String load, String leg, OpenLoopResult r, AnswerTally.Counts a) {
        LatencySummary l = r.latency();
        return java.util.Arrays.asList(load, leg, r.achievedSendRate(), r.requestsPerSec(),
                a.goodput() / r.durationS(), p50(l), p99(l), l == null ? null : l.p999Ms(), r.errors(), r.unanswered(),
                a.defaults());
    }

    private static List<Object> ratioRow(String load, Ratios x) {
        return java.util.Arrays.asList(load, "gateway / direct", null, x.throughput(), null, x.p50(), x.p99(), null,
                null, null, null);
    }

    private static Double p50(LatencySummary l) {
        return l == null ? null : l.p50Ms();
    }

    private static Double p99(LatencySummary l) {
        return l == null ? null : l.p99Ms();
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
            sb.append(String.format(Locale.ROOT, "%nopen loop, %s arrivals, latency from the intended send time, "
                    + "%.1f s measured per leg%n", settings.getOrDefault("arrivals", "poisson"),
                    openLoop.get(0).direct().durationS()));
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
