package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.containers.onnx.FashionMnist;
import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.LatencyRecorder;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.ZipfOipWorkload;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.oip.client.ContainerClient;
import io.servegate.workload.admin.GatewayAdminClient;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Many model versions on a few multi-model ONNX containers through the real gateway: a model
 * repository of COUNT versions (bench/model-repository.sh's layout, version i is architecture
 * i mod 4, version i / 4 + 1), Zipf popularity over them (version i ranked i + 1), REPLICAS
 * onnx containers whose memory budget holds the RESIDENT most popular versions. Two placements
 * with the same containers and budget, each behind a fresh gateway: <b>lru</b>, every version
 * placed on one pool (the gateway's MultiModelScheduler loads on demand and evicts the least
 * recently used), and <b>static</b>, the RESIDENT most popular versions registered as
 * ordinary replicas on every container and the others registered without replicas (answered
 * with the default). Reports goodput, cold-start rate and p99 of each.
 */
@Command(name = "many-models", mixinStandardHelpOptions = true,
        description = "Many ONNX model versions on shared containers: on-demand loading with LRU vs a static placement.")
public final class ManyModelsCommand implements Callable<Integer> {

    static final String SCENARIO = "many-models";
    private static final String[] ARCHITECTURES = {"fmnist-cnn", "fmnist-mlp", "fmnist-logreg", "fmnist-tiny"};

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Option(names = "--onnx-jar", defaultValue = "containers/onnx/target/onnx-container.jar",
            description = "The onnx container's jar (default ${DEFAULT-VALUE}).")
    Path onnxJar;

    @Option(names = "--model-dir", required = true, description = "A repository made by bench/model-repository.sh.")
    Path modelDir;

    @Option(names = "--count", defaultValue = "200", description = "Model versions (default ${DEFAULT-VALUE}).")
    int count;

    @Option(names = "--resident", defaultValue = "20",
            description = "The budget holds this many of the most popular versions (default ${DEFAULT-VALUE}).")
    int resident;

    @Option(names = "--replicas", defaultValue = "2", description = "Containers (default ${DEFAULT-VALUE}).")
    int replicas;

    @Mixin
    RateOption rate = new RateOption(100);

    @Mixin
    WarmupOption warmup = new WarmupOption(10);

    @Option(names = "--warmup-rate", description = "Offered queries/s during the unmeasured seconds (default: --rate), "
            + "e.g. an overload first, to see whether the measured rate is served after it.")
    Double warmupRate;

    @Mixin
    DurationOption duration = new DurationOption(30);

    @Mixin
    SloOption slo;

    @Option(names = "--zipf-s", defaultValue = "1", description = "Zipf exponent (default ${DEFAULT-VALUE}).")
    double zipfS;

    @Mixin
    SeedOption seed;

    @Option(names = "--placements", split = ",", defaultValue = "lru,static",
            description = "Which placements to run, of lru and static (default ${DEFAULT-VALUE}).")
    List<String> placements;

    @Mixin
    ResultsOption results;

    /** A model version of the repository. */
    record Version(String name, String version, long sizeBytes) {
        String path() {
            return "/v2/models/" + name + "/versions/" + version + "/infer";
        }
    }

    @Override
    public Integer call() throws Exception {
        if (count < 1 || resident < 1 || resident > count || replicas < 1 || !(rate.one() > 0) || duration.seconds < 1
                || warmup.seconds < 0 || warmupRate != null && !(warmupRate > 0) || Math.round(slo.ms()) < 1 || !(zipfS >= 0)
                || placements.isEmpty() || !List.of("lru", "static").containsAll(placements)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "need 1 <= resident <= count, replicas >= 1, "
                    + "positive rates, duration and SLO, zipf-s >= 0, placements of lru and static");
        }
        List<Version> versions = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String name = ARCHITECTURES[i % ARCHITECTURES.length];
            String version = Integer.toString(i / ARCHITECTURES.length + 1);
            Path file = modelDir.resolve(name).resolve(version).resolve("model.onnx");
            if (!Files.isRegularFile(file)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "no " + file
                        + ": make the repository with bench/model-repository.sh DIR " + count);
            }
            versions.add(new Version(name, version, Files.size(file)));
        }
        long budget = versions.subList(0, resident).stream().mapToLong(Version::sizeBytes).sum();
        var err = spec.commandLine().getErr();
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        Path dir = results.create(SCENARIO);
        List<float[]> images = FashionMnist.testSet().images().subList(0, 1000);

        List<Map<String, Object>> results = new ArrayList<>();
        for (String placement : placements) {
            err.printf(Locale.ROOT, "%s: %d versions, budget %d bytes per container, %d containers%n", placement,
                    count, budget, replicas);
            results.add(run(placement, versions, budget, images, dir));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("scenario", SCENARIO);
        report.put("startedAt", startedAt.toString());
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("count", count);
        settings.put("resident", resident);
        settings.put("replicas", replicas);
        settings.put("budgetBytesPerContainer", budget);
        settings.put("rate", rate.one());
        settings.put("warmupS", warmup.seconds);
        settings.put("warmupRate", warmupRate());
        settings.put("durationS", duration.seconds);
        settings.put("sloMs", Math.round(slo.ms()));
        settings.put("zipfS", zipfS);
        settings.put("seed", seed.seed());
        settings.put("inputs", "Fashion-MNIST test images 0..999");
        report.put("settings", settings);
        report.put("environment", Map.of("cpus", Runtime.getRuntime().availableProcessors(), "loadAverageAtStart",
                atStart.loadAverage(), "loadAverageAtEnd", RunConditions.now().loadAverage()));
        report.put("results", results);
        Path json = dir.resolve("many-models.json");
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), report);

        List<String> labels = results.stream().map(r -> (String) r.get("placement")).toList();
        Map<String, List<Double>> bars = Charts.series();
        bars.put("goodput % of offered", results.stream().map(r -> (Double) r.get("goodputPercent")).toList());
        bars.put("cold-start %", results.stream().map(r -> (Double) r.get("coldStartPercent")).toList());
        bars.put("p99 ms", results.stream().map(r -> (Double) r.get("p99Ms")).toList());
        Path png = Charts.bars(dir.resolve("many-models.png"), String.format(Locale.ROOT,
                "%d ONNX model versions, Zipf s=%s, %d containers holding %d each, %.0f q/s, SLO %d ms", count,
                zipfS, replicas, resident, rate.one(), Math.round(slo.ms())), "", labels, bars, true);
        List<String> headers = List.of("placement", "goodput/s", "goodput %", "defaults", "late", "cold-start %",
                "loads", "evictions", "p99 ms", "p99 predictions ms", "container RSS MiB");
        List<List<Object>> rows = new ArrayList<>();
        for (Map<String, Object> r : results) {
            rows.add(java.util.Arrays.asList(r.get("placement"), r.get("goodputPerSec"), r.get("goodputPercent"), r.get("defaults"),
                    r.get("late"), r.get("coldStartPercent"), r.get("loads"), r.get("evictions"), r.get("p99Ms"),
                    r.get("p99PredictionsMs"), r.get("containerRssMiB")));
        }
        new HtmlReport("Many models: on-demand loading with LRU vs a static placement", "Through the real gateway, "
                + count + " real ONNX model versions on " + replicas + " onnx containers whose budget holds the "
                + resident + " most popular; Poisson arrivals with Zipf popularity.")
                .conditions(startedAt.toString(), Map.of("loadAverageAtStart", atStart.loadAverage()))
                .settings(settings).table(headers, rows).image(png, "goodput, cold starts and p99 by placement")
                .link(json, "many-models.json").write(dir.resolve("index.html"));
        var stdout = spec.commandLine().getOut();
        stdout.println(String.join(" | ", headers));
        rows.forEach(r -> stdout.println(String.join(" | ", r.stream().map(HtmlReport::format).toList())));
        stdout.println("wrote " + dir.resolve("index.html"));
        return 0;
    }

    private Map<String, Object> run(String placement, List<Version> versions, long budget, List<float[]> images,
            Path dir) throws Exception {
        GatewayProcess gateway = gatewayOptions.start(dir, placement,
                List.of("--servegate.oip.timeout=" + Math.round(slo.ms()) + "ms"));
        List<ContainerChild> containers = new ArrayList<>();
        try {
            GatewayAdminClient admin = gateway.admin();
            for (int i = 0; i < replicas; i++) {
                containers.add(ContainerChild.start(onnxJar, List.of("-Xmx512m"), List.of("--model-dir",
                        modelDir.toString(), "--memory-budget-bytes", Long.toString(budget), "--intra-op-threads", "1"),
                        dir.resolve(placement + "-container-" + i + ".log"), 60));
            }
            List<String> addresses = containers.stream().map(ContainerChild::address).toList();
            Map<String, Long> loadMicros = "lru".equals(placement) ? profileLoads(addresses.get(0)) : Map.of();
            for (int i = 0; i < versions.size(); i++) {
                Version v = versions.get(i);
                if ("lru".equals(placement)) {
                    Map<String, Object> body = new LinkedHashMap<>();
                    body.put("pool", "many");
                    body.put("model_name", v.name());
                    body.put("model_version", v.version());
                    body.put("input_type", "floats");
                    body.put("addresses", addresses);
                    body.put("memory_budget_bytes", budget);
                    body.put("model_size_bytes", v.sizeBytes());
                    body.put("load_time_micros", loadMicros.get(v.name()));
                    admin.post("deploy_model", body);
                } else {
                    admin.addModel(v.name(), v.version(), "floats", -1);
                    if (i < resident) {
                        for (String address : addresses) {
                            admin.awaitAvailable(admin.addContainer(v.name(), v.version(), address),
                                    Duration.ofSeconds(60));
                        }
                    }
                }
            }
            if ("lru".equals(placement)) {
                awaitPool(admin);
            }
            List<String> paths = versions.stream().map(Version::path).toList();
            try (ZipfOipWorkload workload = new ZipfOipWorkload(GatewayProcess.HOST, gateway.port(), paths, zipfS,
                    seed.seed(), images, 256, Duration.ofSeconds(10))) {
                if (warmup.seconds > 0) {
                    new OpenLoop(warmupRate(), Duration.ZERO, warmup.duration(), Duration.ofSeconds(5),
                            seed.seed() + 1).run(workload);
                }
                JsonNode before = "lru".equals(placement) ? admin.get("get_placements").get(0) : null;
                Map<String, Double> defaultsBefore = poolDefaults(gateway);
                AtomicLong good = new AtomicLong();
                AtomicLong defaults = new AtomicLong();
                AtomicLong late = new AtomicLong();
                AtomicLong notResident = new AtomicLong();
                LatencyRecorder predictions = new LatencyRecorder();
                long sloNanos = Math.round(slo.ms()) * 1_000_000;
                OpenLoopResult r = new OpenLoop(rate.one(), Duration.ZERO, duration.duration(),
                        Duration.ofSeconds(5), seed.seed()).run(workload, (answer, nanos) -> {
                            ZipfOipWorkload.RankedAnswer a = (ZipfOipWorkload.RankedAnswer) answer;
                            if (a.rank() >= resident) {
                                notResident.incrementAndGet();
                            }
                            if (a.answer().isDefault()) {
                                defaults.incrementAndGet();
                            } else {
                                predictions.record(nanos);
                                (nanos <= sloNanos ? good : late).incrementAndGet();
                            }
                        });
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("placement", placement);
                m.put("offeredPerSec", r.scheduledRate());
                m.put("answered", r.requests());
                m.put("errors", r.errors());
                m.put("unanswered", r.unanswered());
                m.put("goodputPerSec", round(good.get() / r.durationS()));
                m.put("goodputPercent", round(100.0 * good.get() / Math.max(1, r.scheduled())));
                m.put("defaults", defaults.get());
                m.put("late", late.get());
                if (before != null) {
                    JsonNode after = admin.get("get_placements").get(0);
                    long arrivals = after.get("arrivals").asLong() - before.get("arrivals").asLong();
                    long cold = after.get("cold_starts").asLong() - before.get("cold_starts").asLong();
                    m.put("coldStartPercent", round(100.0 * cold / Math.max(1, arrivals)));
                    m.put("loads", after.get("loads").asLong() - before.get("loads").asLong());
                    m.put("evictions", after.get("evictions").asLong() - before.get("evictions").asLong());
                    m.put("loadMicrosProfiled", loadMicros);
                    Map<String, Long> byReason = new LinkedHashMap<>();
                    poolDefaults(gateway).forEach((reason, n) ->
                            byReason.put(reason, Math.round(n - defaultsBefore.getOrDefault(reason, 0.0))));
                    m.put("poolDefaultsByReason", byReason);
                } else {
                    // a query for a version outside the resident set finds no replica holding it
                    m.put("coldStartPercent", round(100.0 * notResident.get() / Math.max(1, r.requests())));
                    m.put("loads", 0L);
                    m.put("evictions", 0L);
                }
                m.put("p99Ms", r.latency() == null ? null : round(r.latency().p99Ms()));
                LatencyRecorder.Snapshot p = predictions.snapshot();
                m.put("p99PredictionsMs", p.histogram().getTotalCount() == 0 ? null
                        : round(LatencySummary.of(p.histogram()).p99Ms()));
                m.put("containerRssMiB", containers.stream().map(c -> round(c.residentBytes() / 1048576.0)).toList());
                m.put("loadAverageAfter", RunConditions.now().loadAverage());
                return m;
            }
        } finally {
            for (ContainerChild c : containers) {
                c.close();
            }
            gateway.close();
        }
    }

    /**
     * Each architecture's load time on one container, as the scheduler's profile: the larger of
     * two RepositoryModelLoad round trips of its version 1, after one unmeasured load (the
     * process's first session of an architecture pays ONNX Runtime's one-off costs).
     */
    private Map<String, Long> profileLoads(String address) throws Exception {
        Map<String, Long> out = new LinkedHashMap<>();
        try (ContainerClient client = ContainerClient.connect(address)) {
            for (String name : ARCHITECTURES) {
                long worst = 0;
                for (int i = 0; i < 3; i++) {
                    long start = System.nanoTime();
                    client.loadModel(name, "1", Duration.ofSeconds(30)).get();
                    if (i > 0) {
                        worst = Math.max(worst, System.nanoTime() - start);
                    }
                    client.unloadModel(name, "1", Duration.ofSeconds(30)).get();
                }
                out.put(name, worst / 1000);
            }
        }
        return out;
    }

    static void awaitPool(GatewayAdminClient admin) throws IOException, InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < until) {
            boolean all = true;
            for (JsonNode r : admin.get("get_placements").get(0).get("replicas")) {
                all &= r.get("available").asBoolean();
            }
            if (all) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException("the pool's containers did not become available");
    }

    /**
     * The pool's defaults so far by reason ({@code servegate_pool_rejected_total}): early
     * {@code infeasible} defaults with few loads are a pool that sends nothing, {@code deadline}
     * ones queries that waited out their time. Empty when the scrape failed.
     */
    private static Map<String, Double> poolDefaults(GatewayProcess gateway) throws InterruptedException {
        String text = GatewayMetrics.scrapeText(gateway);
        Map<String, Double> out = new LinkedHashMap<>();
        if (text != null) {
            PrometheusText scrape = PrometheusText.parse(text);
            for (String reason : List.of("infeasible", "deadline", "overloaded", "no_replica")) {
                out.put(reason, scrape.sum("servegate_pool_rejected_total", "reason", reason));
            }
        }
        return out;
    }

    private double warmupRate() {
        return warmupRate == null ? rate.one() : warmupRate;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
