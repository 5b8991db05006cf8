package io.servegate.loadgen.cli;

import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.DriveReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.arrival.ArrivalPattern;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Open-loop load on a gateway that is already running (started by someone else, with its apps
 * registered): Clipper queries to one app at a given mean rate, then the goodput, the defaults,
 * the errors and the latency percentiles. Latency runs from each query's intended send time.
 */
@Command(name = "drive", mixinStandardHelpOptions = true,
        description = "Drives a running gateway's app with open-loop load and prints goodput (in time, defaults, "
                + "errors) and latency percentiles; --out-file writes them as a JSON report.")
public final class DriveCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--url", required = true, description = "The gateway's query API, e.g. http://127.0.0.1:1337.")
    URI url;

    @Option(names = "--app", required = true, description = "The app to query: POST /{app}/predict.")
    String app;

    @Mixin
    RateOption rate = new RateOption();

    @Mixin
    DurationOption duration = new DurationOption(10);

    // a gateway's first seconds (JIT, connection set-up, the scheduler learning the batch costs)
    // answer late: measured from the first query, they read as the gateway's steady state
    @Mixin
    WarmupOption warmup = new WarmupOption(5);

    @Option(names = "--input-shape", split = ",",
            description = "Random floats per query, as a shape whose product is the length, e.g. 784 or 1,28,28 "
                    + "(for an app of input type floats; the default, 8, unless --input-bytes).")
    int[] inputShape;

    @Option(names = "--input-bytes", description = "Random bytes per query, base64 (for an app of input type bytes).")
    Integer inputBytes;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(512);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(5000);

    @Mixin
    OutFileOption out;

    @Mixin
    SloOption slo;

    @Mixin
    SeedOption seed;

    @Mixin
    ArrivalOptions arrivals;

    @Override
    public Integer call() throws Exception {
        ArrivalPattern pattern;
        try {
            pattern = arrivals.process();
            validate();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        Supplier<byte[]> bodies;
        String input;
        if (inputBytes != null) {
            int n = inputBytes;
            bodies = () -> RandomInputs.bytesQueryBody(n);
            input = n + " random bytes";
        } else {
            RandomInputs floats = new RandomInputs(inputShape == null ? 8 : Arrays.stream(inputShape)
                    .reduce(1, Math::multiplyExact));
            bodies = floats::queryBody;
            input = floats.length() + " random floats";
        }
        int port = url.getPort() != -1 ? url.getPort() : "https".equals(url.getScheme()) ? 443 : 80;
        Duration timeout = requestTimeout.duration();
        RunConditions atStart = RunConditions.now();
        Instant startedAt = Instant.now();
        AnswerTally tally = new AnswerTally(slo.nanos());
        OpenLoopResult result;
        try (GatewayPredictWorkload workload = GatewayPredictWorkload.clipper(url.getHost(), port, app, bodies,
                connections.max, timeout)) {
            result = new OpenLoop(rate.one(), pattern, warmup.duration(), duration.duration(), timeout, seed.seed())
                    .run(workload, (answer, nanos) -> tally.accept(answer, nanos));
        }
        AnswerTally.Counts counts = tally.counts();
        DriveReport report = new DriveReport(startedAt.toString(), settings(pattern, input),
                RunConditions.span(atStart, RunConditions.now()), result, counts,
                counts.goodput() / result.durationS());
        print(spec.commandLine().getOut(), report);
        if (out.file() != null) {
            report.writeJson(out.file());
        }
        return result.requests() > 0 ? 0 : 1;
    }

    private void validate() {
        if (!(rate.one() > 0) || !(duration.seconds > 0) || !(warmup.seconds >= 0) || !(slo.ms() > 0) || connections.max < 1
                || requestTimeout.ms < 1) {
            throw new IllegalArgumentException("--rate, --duration-s, --slo-ms, --max-connections and --timeout-ms "
                    + "must be positive, --warmup-s >= 0");
        }
        if (inputShape != null && inputBytes != null) {
            throw new IllegalArgumentException("give --input-shape or --input-bytes, not both");
        }
        if (inputShape != null && (inputShape.length == 0 || Arrays.stream(inputShape).anyMatch(d -> d < 1))) {
            throw new IllegalArgumentException("--input-shape wants positive dimensions, e.g. 1,28,28");
        }
        if (inputBytes != null && inputBytes < 1) {
            throw new IllegalArgumentException("--input-bytes must be positive");
        }
        if (url.getHost() == null || !"http".equals(url.getScheme())) {
            throw new IllegalArgumentException("--url wants http://HOST:PORT, got " + url);
        }
    }

    private Map<String, Object> settings(ArrivalPattern pattern, String input) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("url", url.toString());
        s.put("app", app);
        s.put("rate", rate.one());
        s.put("arrivals", pattern.describe());
        s.put("durationS", duration.seconds);
        s.put("warmupS", warmup.seconds);
        s.put("input", input);
        s.put("sloMs", slo.ms());
        s.put("maxConnections", connections.max);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("seed", seed.seed());
        return s;
    }

    private static void print(PrintWriter out, DriveReport r) {
        OpenLoopResult l = r.load();
        AnswerTally.Counts c = r.answers();
        out.printf(Locale.ROOT, "offered %.1f/s (%s) for %.1f s: %d scheduled%n", l.offeredRate(),
                r.settings().get("arrivals"), l.durationS(), l.scheduled());
        out.printf(Locale.ROOT, "goodput %.1f/s: %d predictions within %s ms, %d late, %d defaults %s, %d errors, "
                        + "%d unanswered%n", r.goodputPerSec(), c.goodput(), r.settings().get("sloMs"),
                c.predictions() - c.goodput(), c.defaults(), c.defaultsByExplanation(), l.errors(), l.unanswered());
        LatencySummary lat = l.latency();
        if (lat != null) {
            out.printf(Locale.ROOT, "latency ms: p50 %.2f, p90 %.2f, p99 %.2f, p99.9 %.2f, max %.2f%n", lat.p50Ms(),
                    lat.p90Ms(), lat.p99Ms(), lat.p999Ms(), lat.maxMs());
        }
        if (l.firstError() != null) {
            out.println("first error: " + l.firstError());
        }
        out.flush();
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1e9));
    }
}
