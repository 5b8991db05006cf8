package io.servegate.gateway.bench;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.gateway.bench.BenchOutput.Args;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.JavaCommand;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Fashion-MNIST cascade through the real gateway with real containers: is asking the CNN only
 * about the images a cheap model is unsure of as accurate as asking it about every image, and
 * how much CNN work and latency does it save? A benchmark: it reports, it asserts nothing.
 *
 * <p>The gateway runs in its own JVM ({@link GatewayChild}: prediction cache off, so that every
 * arm computes every answer), each ONNX model in its own container process
 * ({@code OnnxContainer}, one intra-op thread): {@code fmnist-cnn} answering labels, the first
 * models ({@code --first-models}, default {@code fmnist-logreg,fmnist-tiny}) answering raw
 * logits. Every arm first gets {@code --warmup} (1,000) unmeasured queries; then the arms run one
 * after the other, each over the first {@code --images} (10,000) test images in file order, by
 * {@code --clients} (1) closed-loop clients, and the baseline runs once more at the end:
 * <ul>
 *   <li>{@code fmnist-cnn alone}: an app linked to the CNN (the baseline);</li>
 *   <li>{@code M alone}: a one-stage pipeline of first model M (its label is the argmax);</li>
 *   <li>{@code M → fmnist-cnn below θ}: a two-stage pipeline, the CNN asked when M's softmax
 *       confidence is below θ, for each θ of {@code --thresholds} (0.9, 0.95, 0.99).</li>
 * </ul>
 * Apps and pipelines have an SLO of {@code --slo-ms} (100 ms); the cascades have no plan (the SLO
 * is split by the profiled latencies) unless {@code --plan-us first,cnn} gives the two stages'
 * {@code deadline_micros}. Accuracy counts answers equal to the test label (a default counts as
 * wrong); CNN queries are the gateway's own count of queries its scheduler sent to the CNN
 * ({@code servegate_scheduler_batch_size_sum}), read before and after each arm. Writes
 * {@code cascade.json} and {@code cascade.md} under {@code --out}; run from the {@code gateway}
 * directory (bench/cascade.sh does).
 */
public final class CascadeBenchmark {

    static final Path MODELS_DIR = Path.of("../containers/onnx/models");
    static final String CNN = "fmnist-cnn";
    private static final Pattern CNN_QUERIES = Pattern.compile(
            "^servegate_scheduler_batch_size_sum\\{[^}]*model=\"" + CNN + "\"[^}]*\\} ([0-9.eE+-]+)$", Pattern.MULTILINE);

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final GatewayChild gateway;
    private final FashionMnist data;
    private final String[] bodies;

    private CascadeBenchmark(GatewayChild gateway, FashionMnist data, int images) {
        this.gateway = gateway;
        this.data = data;
        this.bodies = new String[images];
        for (int i = 0; i < images; i++) {
            StringBuilder sb = new StringBuilder("{\"input\":[");
            float[] px = data.images().get(i);
            for (int k = 0; k < px.length; k++) {
                sb.append(k == 0 ? "" : ",").append(px[k]);
            }
            bodies[i] = sb.append("]}").toString();
        }
    }

    /** One arm's figures. */
    record Arm(String name, String endpoint, int queries, int correct, int defaults, Map<String, Integer> missedBy,
            long cnnQueries, double meanMs, double p50Ms, double p99Ms) {

        double accuracy() {
            return correct / (double) queries;
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, "out", "images", "warmup", "clients", "thresholds", "first-models", "slo-ms",
                "plan-us");
        Path out = Path.of(args.string("out", "../bench/results"));
        int wanted = args.integer("images", 10_000);
        int warmup = args.integer("warmup", 1_000);
        int clients = args.integer("clients", 1);
        long sloMicros = args.number("slo-ms", 100) * 1_000;
        List<Double> thresholds = Arrays.stream(args.string("thresholds", "0.9,0.95,0.99").split(","))
                .map(Double::parseDouble).toList();
        List<String> firstModels = List.of(args.string("first-models", "fmnist-logreg,fmnist-tiny").split(","));
        String[] plan = args.string("plan-us", "").isEmpty() ? null : args.string("plan-us", "").split(",");
        if (plan != null && plan.length != 2) {
            throw new IllegalArgumentException("--plan-us takes two budgets, the first stage's and the CNN's");
        }
        String firstPlan = plan == null ? "" : ", \"deadline_micros\": " + Long.parseLong(plan[0]);
        String cnnPlan = plan == null ? "" : ", \"deadline_micros\": " + Long.parseLong(plan[1]);
        if (!Files.isDirectory(MODELS_DIR)) {
            throw new IllegalStateException("no models at " + MODELS_DIR.toAbsolutePath() + ": run from the gateway directory");
        }
        FashionMnist data = FashionMnist.testSet();
        int images = Math.min(wanted, data.size());
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();
        Instant started = Instant.now();
        Path tmp = Files.createTempDirectory("servegate-cascade");
        List<AutoCloseable> closing = new ArrayList<>();
        List<Arm> arms = new ArrayList<>();
        try (GatewayChild gateway = GatewayChild.start("1g")) {
            CascadeBenchmark bench = new CascadeBenchmark(gateway, data, images);
            closing.add(bench.container(tmp, CNN, "argmax"));
            for (String m : firstModels) {
                closing.add(bench.container(tmp, m, "raw"));
            }
            bench.admin("add_app", """
                    {"name": "cnn-alone", "input_type": "floats", "default_output": "-1", "latency_slo_micros": %d,
                     "candidate_model_names": ["%s"]}""".formatted(sloMicros, CNN));
            Map<String, String> endpoints = new LinkedHashMap<>();
            endpoints.put(CNN + " alone", "cnn-alone");
            for (String m : firstModels) {
                bench.admin("add_pipeline", """
                        {"name": "%s-alone", "input_type": "floats", "default_output": "-1", "latency_slo_micros": %d,
                         "stages": [{"name": "first", "model": "%s", "output": "logits"}]}"""
                        .formatted(m, sloMicros, m));
                endpoints.put(m + " alone", m + "-alone");
                for (double t : thresholds) {
                    String name = String.format(Locale.ROOT, "%s-cascade-%03d", m, Math.round(t * 1000));
                    bench.admin("add_pipeline", """
                            {"name": "%s", "input_type": "floats", "default_output": "-1", "latency_slo_micros": %d,
                             "stages": [{"name": "first", "model": "%s", "output": "logits"%s},
                                        {"name": "cnn", "model": "%s"%s}],
                             "edges": [{"from": "first", "to": "cnn", "when": {"confidence_below": %s}}]}"""
                            .formatted(name, sloMicros, m, firstPlan, CNN, cnnPlan, t));
                    endpoints.put(String.format(Locale.ROOT, "%s → %s below %.2f", m, CNN, t), name);
                }
            }
            // every arm warms up before any is measured, and the baseline runs again last, so that the
            // JIT's warm-up and drifting machine load do not favour the arms measured later
            for (String endpoint : endpoints.values()) {
                bench.warm(endpoint, warmup, clients);
            }
            endpoints.forEach((name, endpoint) -> arms.add(bench.run(name, endpoint, images, clients)));
            arms.add(bench.run(CNN + " alone, again last", "cnn-alone", images, clients));
        } finally {
            for (int i = closing.size() - 1; i >= 0; i--) {
                closing.get(i).close();
            }
        }
        String loadAfter = Files.readString(Path.of("/proc/loadavg")).trim();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("started", started.toString());
        report.put("loadavg_before", loadBefore);
        report.put("loadavg_after", loadAfter);
        report.put("cpus", Runtime.getRuntime().availableProcessors());
        report.put("images", images);
        report.put("warmup", warmup);
        report.put("clients", clients);
        report.put("slo_ms", sloMicros / 1_000);
        report.put("plan_us", plan == null ? null : List.of(plan));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Arm a : arms) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("arm", a.name());
            r.put("queries", a.queries());
            r.put("accuracy", a.accuracy());
            r.put("defaults", a.defaults());
            r.put("defaults_by_stage", new java.util.TreeMap<>(a.missedBy()));
            r.put("cnn_queries", a.cnnQueries());
            r.put("mean_ms", a.meanMs());
            r.put("p50_ms", a.p50Ms());
            r.put("p99_ms", a.p99Ms());
            rows.add(r);
        }
        report.put("arms", rows);
        Files.createDirectories(out);
        BenchOutput.write(out.resolve("cascade.json"), BenchOutput.json(report));
        String table = table(arms, loadBefore, loadAfter, started, images, clients, sloMicros,
                plan == null ? "no plan" : "plan " + plan[0] + " + " + plan[1] + " µs");
        BenchOutput.write(out.resolve("cascade.md"), table);
        System.out.print(table);
    }

    private static String table(List<Arm> arms, String loadBefore, String loadAfter, Instant started, int images,
            int clients, long sloMicros, String plan) {
        Arm base = arms.get(0);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Fashion-MNIST cascade, %d test images, %d closed-loop client(s), SLO %d ms"
                + " (cascades: %s), started %s, %d CPUs, load average %s before, %s after%n%n", images, clients,
                sloMicros / 1_000, plan, started, Runtime.getRuntime().availableProcessors(), loadBefore, loadAfter));
        sb.append("| arm | accuracy | vs CNN alone | CNN queries | mean latency | p50 | p99 | defaults (by stage) |\n");
        sb.append("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (Arm a : arms) {
            sb.append(String.format(Locale.ROOT, "| %s | %.4f | %+.2f pt | %d (%.1f %%) | %.2f ms | %.2f ms | %.2f ms | %d%s |%n",
                    a.name(), a.accuracy(), 100 * (a.accuracy() - base.accuracy()), a.cnnQueries(),
                    100.0 * a.cnnQueries() / a.queries(), a.meanMs(), a.p50Ms(), a.p99Ms(), a.defaults(),
                    a.missedBy().isEmpty() ? "" : " " + new java.util.TreeMap<>(a.missedBy())));
        }
        return sb.toString();
    }

    private AutoCloseable container(Path tmp, String model, String output) throws Exception {
        ContainerProcess c = ContainerProcess.start(JavaCommand.of(tmp, "io.servegate.containers.onnx.OnnxContainer",
                "--model", MODELS_DIR.resolve(model + ".onnx").toString(), "--name", model, "--output", output,
                "--intra-op-threads", "1", "--host", "127.0.0.1", "--port", "0"), Map.of());
        admin("add_model", """
                {"model_name": "%s", "model_version": "1", "input_type": "floats", "batch_size": -1}""".formatted(model));
        admin("add_container", """
                {"model_name": "%s", "model_version": "1", "address": "%s"}""".formatted(model, c.address()));
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (get(gateway.url() + "/v2/models/" + model + "/ready").statusCode() != 200) {
            if (System.nanoTime() > until) {
                throw new IOException(model + " did not become ready");
            }
            Thread.sleep(100);
        }
        return c;
    }

    /** Sends the first {@code warmup} images to an arm, unmeasured. */
    private void warm(String endpoint, int warmup, int clients) throws Exception {
        run(endpoint + " (warm-up)", endpoint, Math.min(warmup, bodies.length), clients);
    }

    private Arm run(String name, String endpoint, int images, int clients) {
        try {
            return measure(name, endpoint, images, clients);
        } catch (Exception e) {
            throw new IllegalStateException(name + ": " + e.getMessage(), e);
        }
    }

    private Arm measure(String name, String endpoint, int images, int clients) throws Exception {
        String url = gateway.url() + "/" + endpoint + "/predict";
        long cnnBefore = cnnQueries();
        long[] latencies = new long[images];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger correct = new AtomicInteger();
        AtomicInteger defaults = new AtomicInteger();
        Map<String, Integer> missedBy = new java.util.concurrent.ConcurrentSkipListMap<>();
        Pattern stage = Pattern.compile("stage '([^']+)'");
        Pattern output = Pattern.compile("\"output\":\"?(-?[0-9]+)\"?");
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                done.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < images; i = next.getAndIncrement()) {
                        long t0 = System.nanoTime();
                        HttpResponse<String> r = post(url, bodies[i]);
                        latencies[i] = System.nanoTime() - t0;
                        if (r.body().contains("\"default\":true")) {
                            defaults.incrementAndGet();
                            Matcher missed = stage.matcher(r.body());
                            missedBy.merge(missed.find() ? missed.group(1) : "(app)", 1, Integer::sum);
                            continue;
                        }
                        Matcher m = output.matcher(r.body());
                        if (m.find() && Integer.parseInt(m.group(1)) == data.label(i)) {
                            correct.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        long cnn = cnnQueries() - cnnBefore;
        long[] sorted = latencies.clone();
        Arrays.sort(sorted);
        Arm arm = new Arm(name, endpoint, images, correct.get(), defaults.get(), Map.copyOf(missedBy), cnn,
                Arrays.stream(latencies).average().orElse(0) / 1e6, sorted[images / 2] / 1e6,
                sorted[(int) Math.min(images - 1, Math.ceil(images * 0.99) - 1)] / 1e6);
        System.err.printf(Locale.ROOT, "%s: accuracy %.4f, CNN queries %d, mean %.2f ms%n", name, arm.accuracy(), cnn,
                arm.meanMs());
        return arm;
    }

    private long cnnQueries() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(gateway.url() + "/metrics"))
                .header("Accept", "text/plain").GET().build(), HttpResponse.BodyHandlers.ofString());
        Matcher m = CNN_QUERIES.matcher(r.body());
        return m.find() ? Math.round(Double.parseDouble(m.group(1))) : 0;
    }

    private void admin(String endpoint, String body) throws Exception {
        HttpResponse<String> r = post(gateway.adminUrl() + "/admin/" + endpoint, body);
        if (r.statusCode() != 200) {
            throw new IOException(endpoint + " answered " + r.statusCode() + ": " + r.body());
        }
    }

    private HttpResponse<String> post(String url, String body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
