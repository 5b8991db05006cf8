package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.cli.SchedulingCommand;
import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.TimerJitter;
import io.servegate.loadgen.scenario.Measurement;
import io.servegate.loadgen.scenario.ServingOptimum;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The {@code scheduling} scenario's results: one {@link Run} per policy and load case, written as
 * {@code scheduling.json}, {@code index.html} with its PNG plots, and a table for the terminal.
 *
 * @param scenario the subcommand
 * @param startedAt ISO-8601 instant
 * @param settings the command's options
 * @param environment machine, JVM, load average at start and end
 * @param gateways each policy's gateway process: policy, command, log, problems seen in its log
 * @param runs one per policy and case, in the order run
 * @param table4 Symphony's Table 4 ResNet50 figures, beside which the 8-replica case is reported
 * @param findings sentences that read the numbers
 */
public record SchedulingReport(String scenario, String startedAt, Map<String, Object> settings,
        Map<String, Object> environment, List<Map<String, Object>> gateways, List<Run> runs,
        List<Reference> table4, List<String> findings) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * A goodput to compare the 8-replica case with.
     *
     * @param source where it comes from
     * @param goodputPerSec its goodput (analytic: throughput), requests/s
     */
    public record Reference(String source, double goodputPerSec) {
    }

    /** Symphony's Table 4, ResNet50 row (8 GPUs, α 1.053 ms, β 5.072 ms, SLO 25 ms). */
    public static List<Reference> symphonyTable4() {
        int n = SchedulingCommand.TABLE4_REPLICAS;
        double beta = SchedulingCommand.TABLE4_BETA_MS;
        double alpha = SchedulingCommand.TABLE4_ALPHA_MS;
        double slo = SchedulingCommand.TABLE4_SLO_MS;
        ServingOptimum.Point staggered = ServingOptimum.staggered(n, beta, alpha, slo);
        ServingOptimum.Point none = ServingOptimum.uncoordinated(n, beta, alpha, slo);
        return List.of(
                new Reference("analytic, staggered batches (b = " + staggered.batchSize() + ")", staggered.perSec()),
                new Reference("analytic, no coordination (b = " + none.batchSize() + ")", none.perSec()),
                new Reference("Symphony, measured in the paper", 5169),
                new Reference("Nexus, measured in the paper", 3965),
                new Reference("Clockwork, measured in the paper", 2036));
    }

    /**
     * CPU seconds used so far by the load generator, the emulated containers and the whole machine.
     *
     * @param nanoTime when it was read ({@link System#nanoTime()})
     * @param loadGeneratorCpuS this JVM's CPU time
     * @param containersCpuS the container processes' CPU time together; NaN where the OS does not say
     * @param machineBusyCpuS all cores' time neither idle nor waiting for I/O; NaN where unknown
     */
    public record CpuReading(long nanoTime, double loadGeneratorCpuS, double containersCpuS, double machineBusyCpuS) {

        public static CpuReading now(List<ContainerChild> containers) {
            double containersS = 0;
            for (ContainerChild c : containers) {
                Duration t = c.cpuTime();
                containersS += t == null ? Double.NaN : t.toNanos() / 1e9;
            }
            double loadgen = RunConditions.now().loadgenCpuS();
            return new CpuReading(System.nanoTime(), loadgen < 0 ? Double.NaN : loadgen, containersS,
                    RunConditions.machineBusyCpuS());
        }
    }

    /**
     * Cores busy on average from just before a measured window until its last answer (CPU seconds
     * over wall seconds); null where unknown.
     *
     * @param wallS the span measured
     * @param gateway the gateway process (its {@code process_cpu_time_ns_total})
     * @param loadGenerator this load generator's JVM
     * @param containers all emulated container processes together
     * @param machine every process on the machine, including other users' and the timer control's
     * @param others the machine's less the gateway's, the load generator's and the containers': other users,
     *     the timer control, the kernel
     * @param available the cores this JVM sees
     */
    public record Cores(double wallS, Double gateway, Double loadGenerator, Double containers, Double machine,
            Double others, int available) {

        static Cores of(CpuReading before, CpuReading after, GatewayMetrics gatewayDelta) {
            double wall = (after.nanoTime() - before.nanoTime()) / 1e9;
            Double gateway = gatewayDelta == null ? null : perWall(gatewayDelta.cpuSeconds(), wall);
            Double loadGenerator = perWall(after.loadGeneratorCpuS() - before.loadGeneratorCpuS(), wall);
            Double containers = perWall(after.containersCpuS() - before.containersCpuS(), wall);
            Double machine = perWall(after.machineBusyCpuS() - before.machineBusyCpuS(), wall);
            Double others = gateway == null || loadGenerator == null || containers == null || machine == null ? null
                    : Math.max(0, machine - gateway - loadGenerator - containers);
            return new Cores(wall, gateway, loadGenerator, containers, machine, others,
                    Runtime.getRuntime().availableProcessors());
        }

        private static Double perWall(double cpuS, double wallS) {
            return Double.isNaN(cpuS) || !(wallS > 0) ? null : cpuS / wallS;
        }
    }

    /**
     * One policy on one load case.
     *
     * @param policy the gateway's scheduling policy
     * @param caseName the load case (also its app's and model's name)
     * @param description what the case is
     * @param replicas emulated replicas of the model
     * @param betaMs their cost per batch
     * @param alphaMs their cost per input
     * @param sloMs the app's SLO
     * @param arrivals the arrival process
     * @param offeredPerSec the offered rate
     * @param optimumBatchSize the batch size of the analytic optimum at that rate
     * @param optimumPerSec the analytic optimum's goodput at that rate ({@link ServingOptimum#atRate})
     * @param targetOfOptimum the share of the optimum issue 12 asks for; null if none
     * @param goodputOfOptimum the measured goodput over the optimum
     * @param measurement what the client saw (goodput = predictions within the SLO), with the gateway's
     *     own summary (CPU per query, batch sizes of all its replicas)
     * @param defaultsByReason the gateway's defaults for the app in the window, by reason
     *     ({@code servegate_defaults_total})
     * @param defaultsByExplanation the defaults as the client saw them, by the answer's explanation
     * @param answers answers (predictions or defaults) the client counted, read at the same moment as lateAnswers
     * @param lateAnswers those later than SLO + 2 ms at the client
     * @param lateShare lateAnswers over answers
     * @param control the bare timer thread in the same window; null if not run or failed
     * @param controlLateShare the control's share of wake-ups more than 2 ms late
     * @param lateVsControl lateShare over controlLateShare; null if the control had none
     * @param meanBatchSize inputs per batch of the case's model in the window
     * @param batchSizeMetric the gateway metric it came from
     * @param replicaIdleFractions the gateway's {@code servegate_replica_idle_fraction} of each of the
     *     model's replicas at the window's end; empty if the gateway has no such metric
     * @param cores where the machine's CPU went
     * @param loadKeptUp whether the load generator sent ≥ 97 % of the schedule with send lag p99 ≤ 2 ms (as in
     *     the aimd scenario); if not, the load was burstier than scheduled
     */
    public record Run(String policy, String caseName, String description, int replicas, double betaMs,
            double alphaMs, double sloMs, String arrivals, double offeredPerSec, int optimumBatchSize,
            double optimumPerSec, Double targetOfOptimum, Double goodputOfOptimum, Measurement measurement,
            Map<String, Long> defaultsByReason, Map<String, Long> defaultsByExplanation, long answers,
            long lateAnswers,
            Double lateShare, TimerJitter.Result control, Double controlLateShare, Double lateVsControl,
            Double meanBatchSize, String batchSizeMetric, List<Double> replicaIdleFractions, Cores cores,
            boolean loadKeptUp) {

        /** Puts a run together from the load's result and the gateway's scrapes before and after it. */
        public static Run of(String policy, SchedulingCommand.Case c, OpenLoopResult result, AnswerTally.Counts counts,
                AnswerTally.Counts lateCounts, TimerJitter.Result control, String scrapeBefore, String scrapeAfter,
                CpuReading cpuBefore, CpuReading cpuAfter) {
            GatewayMetrics gatewayDelta = scrapeBefore == null || scrapeAfter == null ? null
                    : GatewayMetrics.parse(scrapeAfter).minus(GatewayMetrics.parse(scrapeBefore));
            Map<String, Object> setting = new LinkedHashMap<>();
            setting.put("policy", policy);
            setting.put("case", c.name());
            Measurement m = Measurement.of(policy + " / " + c.name(), setting, result, counts,
                    gatewayDelta == null ? null : gatewayDelta.summary());
            PrometheusText before = PrometheusText.parse(scrapeBefore);
            PrometheusText after = PrometheusText.parse(scrapeAfter);
            Map<String, Double> reasonsBefore = before.sumBy("servegate_defaults_total", "app", c.name(), "reason");
            Map<String, Long> reasons = new TreeMap<>();
            after.sumBy("servegate_defaults_total", "app", c.name(), "reason").forEach((reason, n) -> {
                long d = Math.round(n - reasonsBefore.getOrDefault(reason, 0.0));
                if (d > 0) {
                    reasons.put(reason, d);
                }
            });
            // the scheduler's own summary where the gateway has one, else the per-replica batches
            String metric = "servegate_scheduler_batch_size";
            double batches = delta(before, after, metric + "_count", c.name());
            if (!(batches > 0)) {
                metric = "servegate_batch_size";
                batches = delta(before, after, metric + "_count", c.name());
            }
            Double meanBatch = batches > 0 ? delta(before, after, metric + "_sum", c.name()) / batches : null;
            List<Double> idle = after.where("servegate_replica_idle_fraction", "model", c.name()).stream()
                    .sorted(Comparator.comparing(s -> String.valueOf(s.labels().get("replica"))))
                    .map(PrometheusText.Sample::value).toList();
            ServingOptimum.Point optimum = c.optimum();
            long lateAnswers = lateCounts.late();
            long answers = lateCounts.predictions() + lateCounts.defaults();
            Double lateShare = answers > 0 ? (double) lateAnswers / answers : null;
            Double controlShare = control == null || control.timers() == 0 ? null : control.over2MsShare();
            return new Run(policy, c.name(), c.description(), c.replicas(), c.betaMs(), c.alphaMs(), c.sloMs(),
                    c.arrivals().describe(), c.ratePerSec(), optimum.batchSize(), optimum.perSec(),
                    c.targetOfOptimum(), optimum.perSec() > 0 ? m.goodputPerSec() / optimum.perSec() : null, m,
                    reasons, counts.defaultsByExplanation(), answers, lateAnswers, lateShare, control, controlShare,
                    lateShare == null || controlShare == null || controlShare == 0 ? null : lateShare / controlShare,
                    meanBatch, batches > 0 ? metric : null, idle, Cores.of(cpuBefore, cpuAfter, gatewayDelta),
                    result.achievedSendRate() >= 0.97 * result.scheduledRate() && result.sendLagP99Ms() <= 2.0);
        }

        private static double delta(PrometheusText before, PrometheusText after, String name, String model) {
            return after.sum(name, "model", model) - before.sum(name, "model", model);
        }

        /** The mean of the replicas' idle fractions; null if none were reported. */
        Double meanIdleFraction() {
            return replicaIdleFractions.isEmpty() ? null
                    : replicaIdleFractions.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        }
    }

    /** Writes {@code scheduling.json}, the plots and {@code index.html} into {@code dir}; returns the page. */
    public Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path json = dir.resolve(scenario + ".json");
        JSON.writeValue(json.toFile(), this);
        List<String> policies = distinct(runs, Run::policy);
        List<String> cases = distinct(runs, Run::caseName);

        Map<String, List<Double>> ofOptimum = Charts.series();
        for (String p : policies) {
            ofOptimum.put(p, cases.stream().map(c -> percent(run(p, c) == null ? null : run(p, c).goodputOfOptimum()))
                    .toList());
        }
        ofOptimum.put("issue 12 target", cases.stream().map(c -> percent(anyRun(c).targetOfOptimum())).toList());
        Path goodputPng = Charts.bars(dir.resolve("goodput-vs-optimum.png"),
                "Goodput as % of the analytic optimum at the offered rate", "% of optimum", cases, ofOptimum, true);
        Map<String, List<Double>> late = Charts.series();
        for (String p : policies) {
            late.put(p + ": answers > SLO + 2 ms", cases.stream()
                    .map(c -> percent(run(p, c) == null ? null : run(p, c).lateShare())).toList());
        }
        late.put("bare-timer control: wake-ups > 2 ms late (mean)", cases.stream().map(c -> percent(runs.stream()
                .filter(r -> r.caseName().equals(c) && r.controlLateShare() != null)
                .mapToDouble(Run::controlLateShare).average().stream().boxed().findFirst().orElse(null))).toList());
        Path latePng = Charts.bars(dir.resolve("late-vs-control.png"), "Late answers against the bare-timer control",
                "% of answers / of timer wake-ups", cases, late, true);

        HtmlReport page = new HtmlReport("Scheduling policies side by side", "Goodput (predictions within the SLO at "
                + "the client, per second) of the gateway's scheduling policies " + policies + ", each in a gateway "
                + "of its own started with --servegate.scheduling.policy, on the same emulated containers (one "
                + "process per replica, a batch of b sleeps β + α·b ms) and the same arrival schedules, against the "
                + "analytic optimum at the offered rate.");
        if (!findings.isEmpty()) {
            page.heading("Findings");
            findings.forEach(page::paragraph);
        }
        page.heading("Goodput against the analytic optimum");
        page.table(goodputHeaders(policies), cases.stream().map(c -> goodputRow(c, policies)).toList());
        page.paragraph("optimum: the largest b with λ·(SLO − ℓ(b)) ≥ b, goodput min(λ, N·b/ℓ(b)), where ℓ(b) = β + α·b "
                + "and λ the offered rate: a scheduler that serves the freshest queries in batches of b (Symphony "
                + "§5.2.2; for Poisson arrivals a fluid bound, for Gamma ones an optimistic one). target: the share of "
                + "it that issue 12 asks for.");
        page.image(goodputPng, "goodput as % of the analytic optimum");
        page.heading("Late answers against the bare-timer control");
        page.table(lateHeaders(policies), cases.stream().map(c -> lateRow(c, policies)).toList());
        page.paragraph("late: answers (predictions or defaults) later than SLO + 2 ms at the client, of all answers; "
                + "control: wake-ups more than 2 ms late of a bare timer thread in a JVM of its own over the same "
                + "window, the machine's own scheduling floor; ratio: late over control (issue 12's target: ≤ 2).");
        page.image(latePng, "late answers against the bare-timer control");
        List<Run> table4Runs = runs.stream().filter(r -> r.replicas() == SchedulingCommand.TABLE4_REPLICAS).toList();
        if (!table4Runs.isEmpty()) {
            double staggered = table4.get(0).goodputPerSec();
            page.heading("8 replicas against Symphony's Table 4 (ResNet50)");
            List<List<Object>> rows = new ArrayList<>();
            for (Reference ref : table4) {
                rows.add(List.of(ref.source(), ref.goodputPerSec(), ref.goodputPerSec() / staggered));
            }
            for (Run r : table4Runs) {
                rows.add(List.of(r.policy() + ", measured here at " + HtmlReport.format((double) Math.round(
                        r.offeredPerSec())) + "/s offered", r.measurement().goodputPerSec(),
                        r.measurement().goodputPerSec() / staggered));
            }
            page.table(List.of("source", "goodput/s", "× staggered optimum"), rows);
            page.paragraph("issue 12's target: ≥ 0.8 of the staggered optimum live here. Where the machine's cores "
                    + "are the limit, the next table shows it.");
        }
        page.heading("Where the CPU went");
        page.table(List.of("policy", "case", "sent/s", "send lag p99 ms", "gateway CPU ms/query", "cores: gateway",
                "load generator", "containers", "others", "machine", "of", "replica idle mean", "min", "max"),
                runs.stream().map(SchedulingReport::cpuRow).toList());
        page.paragraph("cores: CPU seconds over wall seconds from just before each measured window to its last "
                + "answer; machine: every process (/proc/stat); others: the machine's less the three named, i.e. other "
                + "users, the timer control and the kernel. replica idle: the gateway's "
                + "servegate_replica_idle_fraction at the window's end, '-' where the gateway has none. Replicas "
                + "that sit idle while the machine's cores are busy and goodput falls short mean that the cores, not "
                + "the replicas, are the limit.");
        page.heading("Details");
        page.table(List.of("policy", "case", "answers/s", "goodput/s", "goodput %", "defaults", "defaults by reason",
                "late > SLO+2", "p50 ms", "p99 ms", "p99.9 ms", "mean batch", "optimum b", "batch metric"),
                runs.stream().map(SchedulingReport::detailRow).toList());
        page.heading("All measurements");
        page.table(Measurement.headers(), runs.stream().map(r -> r.measurement().row()).toList());
        page.paragraph("open-loop latency counts from each request's intended send time; gateway-side figures are "
                + "differences of its Prometheus scrape just before and after each window.");
        page.conditions(startedAt, environment);
        page.settings(settings);
        page.link(json, "all numbers (JSON)");
        for (Map<String, Object> g : gateways) {
            page.paragraph(g.get("policy") + " gateway: " + g.get("command") + "; log " + g.get("log") + " ("
                    + g.get("logProblemLines") + " ERROR/WARN/exception lines)");
        }
        return page.write(dir.resolve("index.html"));
    }

    /** One line per run, for the terminal. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-10s %-10s %8s %8s %9s %6s %8s %8s %7s %8s %8s %6s %8s %7s%n",
                "policy", "case", "offered", "optimum", "goodput/s", "x opt", "p50 ms", "p99 ms", "batch", "late %",
                "ctrl %", "ratio", "cpu ms/q", "cores"));
        for (Run r : runs) {
            Measurement m = r.measurement();
            sb.append(String.format(Locale.ROOT, "%-10s %-10s %8.0f %8.0f %9.1f %6s %8s %8s %7s %8s %8s %6s %8s %7s%n",
                    r.policy(), r.caseName(), r.offeredPerSec(), r.optimumPerSec(), m.goodputPerSec(),
                    fixed(r.goodputOfOptimum(), 2), fixed(m.latency() == null ? null : m.latency().p50Ms(), 2),
                    fixed(m.p99Ms(), 2), fixed(r.meanBatchSize(), 1), fixed(percent(r.lateShare()), 3),
                    fixed(percent(r.controlLateShare()), 3), fixed(r.lateVsControl(), 2),
                    fixed(m.gatewaySide() == null ? null : m.gatewaySide().cpuMsPerQuery(), 3),
                    fixed(r.cores().machine(), 2)));
        }
        findings.forEach(f -> sb.append(f).append('\n'));
        return sb.toString();
    }

    private List<String> goodputHeaders(List<String> policies) {
        List<String> h = new ArrayList<>(List.of("case", "replicas", "β / α / SLO ms", "arrivals", "offered/s",
                "optimum/s", "optimum b", "target"));
        for (String p : policies) {
            h.add(p + " goodput/s");
            h.add(p + " × optimum");
        }
        return h;
    }

    private List<Object> goodputRow(String c, List<String> policies) {
        Run any = anyRun(c);
        List<Object> row = new ArrayList<>(List.of(c, any.replicas(), any.betaMs() + " / " + any.alphaMs() + " / "
                + any.sloMs(), any.arrivals(), any.offeredPerSec(), any.optimumPerSec(), any.optimumBatchSize()));
        row.add(any.targetOfOptimum() == null ? "-" : "≥ " + any.targetOfOptimum());
        for (String p : policies) {
            Run r = run(p, c);
            row.add(r == null ? null : r.measurement().goodputPerSec());
            row.add(r == null ? null : r.goodputOfOptimum());
        }
        return row;
    }

    private List<String> lateHeaders(List<String> policies) {
        List<String> h = new ArrayList<>(List.of("case"));
        for (String p : policies) {
            h.add(p + " late %");
            h.add(p + " control %");
            h.add(p + " ratio");
        }
        return h;
    }

    private List<Object> lateRow(String c, List<String> policies) {
        List<Object> row = new ArrayList<>(List.of(c));
        for (String p : policies) {
            Run r = run(p, c);
            row.add(r == null ? null : percent(r.lateShare()));
            row.add(r == null ? null : percent(r.controlLateShare()));
            row.add(r == null ? null : r.lateVsControl());
        }
        return row;
    }

    private static List<Object> cpuRow(Run r) {
        Measurement m = r.measurement();
        Cores c = r.cores();
        List<Object> row = new ArrayList<>(List.of(r.policy(), r.caseName()));
        row.add(m.sentPerSec());
        row.add(m.sendLagP99Ms());
        row.add(m.gatewaySide() == null ? null : m.gatewaySide().cpuMsPerQuery());
        row.add(c.gateway());
        row.add(c.loadGenerator());
        row.add(c.containers());
        row.add(c.others());
        row.add(c.machine());
        row.add(c.available());
        row.add(r.meanIdleFraction());
        row.add(r.replicaIdleFractions().stream().min(Double::compare).orElse(null));
        row.add(r.replicaIdleFractions().stream().max(Double::compare).orElse(null));
        return row;
    }

    private static List<Object> detailRow(Run r) {
        Measurement m = r.measurement();
        Map<String, Long> reasons = r.defaultsByReason().isEmpty() ? r.defaultsByExplanation() : r.defaultsByReason();
        List<Object> row = new ArrayList<>(List.of(r.policy(), r.caseName()));
        row.add(m.answeredPerSec());
        row.add(m.goodputPerSec());
        row.add(m.goodputPercent());
        row.add(m.defaults());
        row.add(reasons.isEmpty() ? "-" : reasons.toString());
        row.add(r.lateAnswers());
        row.add(m.latency() == null ? null : m.latency().p50Ms());
        row.add(m.p99Ms());
        row.add(m.latency() == null ? null : m.latency().p999Ms());
        row.add(r.meanBatchSize());
        row.add(r.optimumBatchSize());
        row.add(r.batchSizeMetric());
        return row;
    }

    private Run run(String policy, String caseName) {
        return runs.stream().filter(r -> r.policy().equals(policy) && r.caseName().equals(caseName)).findFirst()
                .orElse(null);
    }

    private Run anyRun(String caseName) {
        return runs.stream().filter(r -> r.caseName().equals(caseName)).findFirst().orElseThrow();
    }

    static List<String> distinct(List<Run> runs, Function<Run, String> key) {
        return List.copyOf(new LinkedHashSet<>(runs.stream().map(key).filter(Objects::nonNull).toList()));
    }

    private static Double percent(Double share) {
        return share == null ? null : 100 * share;
    }

    static String fixed(Double v, int decimals) {
        return v == null || v.isNaN() ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }
}
