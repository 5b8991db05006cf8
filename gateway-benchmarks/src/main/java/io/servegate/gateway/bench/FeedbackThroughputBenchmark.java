package io.servegate.gateway.bench;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.bench.BenchOutput.Args;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * Feedback throughput through the gateway (Clipper NSDI'17 §4.2: feedback joins the label with
 * the models' predictions for the input; Clipper reported 6K feedback observations/s without and
 * 11K with prediction cache hits). The gateway joins the prediction it remembers for the input
 * in the feedback's context, else each model's prediction from the prediction cache (querying
 * the model on a miss). A benchmark: it reports, it asserts nothing.
 *
 * <p>Everything in this one JVM on loopback except Redis: a real {@code redis-server} for the
 * selection states ({@link RedisServer}), the gateway ({@link GatewayApplication}, selection
 * store {@code redis}, otherwise defaults: 32 MB prediction cache), and the four Fashion-MNIST
 * ONNX models as in-process containers (OIP gRPC). One app {@value #APP}: exp4 over the four
 * models, SLO 1 s. Then closed loops of {@code --clients} (16) clients, each sending its next
 * {@code POST /fb/update {"input": image, "label": l}} when the previous one is answered, for
 * {@code --warmup-s} (3) then {@code --duration-s} (10) measured seconds, per phase:
 * <ol>
 *   <li>{@code cache-hits}: the first {@code --warm-images} (2,000) test images, predicted through
 *       {@code /fb/predict} beforehand, cycled through: feedback joins those predictions;</li>
 *   <li>{@code cache-hits-per-user}: as (1), with {@code "uid": i % --users} (1,000): one selection
 *       state per user instead of one app-wide state that every client's update goes to; the
 *       predictions were app-wide, so the join is the four models' cached predictions;</li>
 *   <li>{@code cache-misses}: every feedback a never-seen input (the other test images, then all
 *       10,000 again with pixel 0 shifted by {@code r·10⁻⁵} on pass {@code r}), so the gateway has
 *       to query the four models for the join;</li>
 *   <li>{@code predict-hits}, a control: {@code POST /fb/predict {"input": image}} of the images of
 *       (1), answered from the prediction cache: the same body through the same HTTP stack, JSON
 *       reader, selection draw and four cache lookups, without feedback's join, step or Redis
 *       write. What the gateway reaches there bounds what any feedback path could.</li>
 * </ol>
 * The cache-hit phases' load comes from {@code wrk} ({@code --client wrk}, the default: a separate
 * C process, {@value #WRK_THREADS} threads, {@code --clients} connections, bodies cycled by
 * {@code bench/feedback-wrk.lua}), so that the client's CPU is not spent in the gateway's JVM; it is
 * still on the same cores. {@code --client jvm} runs them from a Reactor Netty client in this JVM,
 * as the cache-miss phase always does (its inputs never repeat).
 *
 * <p>Observations/s counts the updates answered 200 (in-JVM client: with {@code "observed": true})
 * that completed in the measured window; with wrk, the gateway's feedback counter is read around
 * the phase as a check that each was an observation. Latency is per request, send to answer. The cache's hit/miss counters
 * (scraped from {@code /metrics}) are reported per phase as a check of what each phase measured.
 *
 * <p>The raw Redis floor, in the same run: after the phases, one feedback of the app-wide and
 * one of the per-user kind is sent while {@code redis-cli MONITOR} captures the selection-state
 * command it made (one EVALSHA of the observe script), and {@code redis-benchmark} replays that
 * very command with the same number of clients ({@code --floor-requests}, 100,000; per user: the
 * key's context replaced by a random one of {@code --users}). Each phase's obs/s is reported
 * over that floor. Both tools are taken from next to {@code $REDIS_SERVER}, or the PATH.
 *
 * <p>On two shared cores the JIT is warm only after tens of seconds of load: with the default
 * {@code --warmup-s} the first phase runs at a fraction of its later rate (a phase run twice,
 * e.g. {@code --phases cache-hits,cache-hits-per-user,cache-hits,cache-hits-per-user}, showed
 * 1,902 then 5,129 obs/s). A phase may be listed more than once; the ratios use its last run.
 *
 * <p>Writes {@code feedback-throughput.json} under {@code --out} and prints a table. Model files
 * are read from {@code ../containers/onnx/models}: run from the {@code gateway} directory
 * (bench/feedback-throughput.sh does).
 */
public final class FeedbackThroughputBenchmark {

    static final Path MODELS_DIR = Path.of("../containers/onnx/models");
    static final List<String> MODELS = List.of("fmnist-cnn", "fmnist-mlp", "fmnist-logreg", "fmnist-tiny");
    static final String APP = "fb";
    static final Path WRK_SCRIPT = Path.of("../bench/feedback-wrk.lua");

    /** What sends the feedback of the cache-hit phases (cache misses always come from this JVM). */
    enum LoadClient {
        /** wrk, a separate process (C, epoll), 2 threads: the same machine, but not the gateway's JVM. */
        WRK,
        /** A Reactor Netty client in the gateway's JVM, as the first versions of this benchmark had. */
        JVM
    }
    static final long SLO_MICROS = 1_000_000;
    private static final float PERTURBATION = 1e-5f;

    private final FashionMnist data;
    private final HttpClient http;
    private final int queryPort;
    private final int clients;
    private final int warmImages;
    private final int users;
    private final LoadClient client;
    /** Per test image: the JSON of {@code "label":L,"input":[}, pixel 0, and {@code ,p1,...,p783]}. */
    private final byte[][] heads;
    private final float[] pixel0;
    private final byte[][] tails;

    private FeedbackThroughputBenchmark(FashionMnist data, HttpClient http, int queryPort, int clients,
            int warmImages, int users, LoadClient client) {
        this.data = data;
        this.client = client;
        this.http = http;
        this.queryPort = queryPort;
        this.clients = clients;
        this.warmImages = warmImages;
        this.users = users;
        int n = data.size();
        heads = new byte[n][];
        pixel0 = new float[n];
        tails = new byte[n][];
        for (int i = 0; i < n; i++) {
            float[] px = data.images().get(i);
            heads[i] = ("\"label\":" + data.label(i) + ",\"input\":[").getBytes(StandardCharsets.US_ASCII);
            pixel0[i] = px[0];
            StringBuilder sb = new StringBuilder(px.length * 8);
            for (int k = 1; k < px.length; k++) {
                sb.append(',').append(px[k]);
            }
            tails[i] = sb.append("]}").toString().getBytes(StandardCharsets.US_ASCII);
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, "out", "clients", "duration-s", "warmup-s", "warm-images", "users", "phases",
                "floor-requests", "client");
        Path out = Path.of(args.string("out", "../bench/results"));
        int clients = args.integer("clients", 16);
        int durationS = args.integer("duration-s", 10);
        int warmupS = args.integer("warmup-s", 3);
        int warmImages = args.integer("warm-images", 2_000);
        int users = args.integer("users", 1_000);
        List<String> phases = List.of(args.string("phases", "cache-hits,cache-hits-per-user,cache-misses").split(","));
        int floorRequests = args.integer("floor-requests", 100_000);
        LoadClient client = LoadClient.valueOf(args.string("client", "wrk").toUpperCase(Locale.ROOT));
        if (!Files.isDirectory(MODELS_DIR)) {
            throw new IllegalStateException("no models at " + MODELS_DIR.toAbsolutePath() + ": run from the gateway directory");
        }
        FashionMnist data = FashionMnist.testSet();
        if (warmImages < 1 || warmImages >= data.size()) {
            throw new IllegalArgumentException("--warm-images must be in [1, " + data.size() + ")");
        }

        List<OnnxPredictor> predictors = new ArrayList<>();
        List<ModelContainer<float[], String>> containers = new ArrayList<>();
        ConfigurableApplicationContext gateway = null;
        ConnectionProvider pool = ConnectionProvider.builder("feedback-bench").maxConnections(clients + 16)
                .pendingAcquireMaxCount(-1).build();
        RedisServer redis = RedisServer.start();
        try {
            for (String m : MODELS) {
                OnnxPredictor p = new OnnxPredictor(MODELS_DIR.resolve(m + ".onnx"));
                predictors.add(p);
                containers.add(ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, p).name(m).version("1")
                        .host("127.0.0.1").port(0).inputLength(FashionMnist.PIXELS).build().start());
            }
            gateway = new SpringApplicationBuilder(GatewayApplication.class).run(
                    "--server.port=0",
                    "--servegate.admin.port=0",
                    "--servegate.selection.store=redis",
                    "--servegate.selection.redis-uri=" + redis.uri(),
                    "--servegate.selection.key-prefix=sg-bench-feedback",
                    "--logging.level.root=WARN",
                    // SLO misses while warming the cache are retried by the warm-up loop: no stack traces
                    "--logging.level.com.github.benmanes.caffeine=ERROR");
            int queryPort = ((WebServerApplicationContext) gateway).getWebServer().getPort();
            int adminPort = gateway.getBean(AdminServer.class).port();
            HttpClient http = HttpClient.create(pool).responseTimeout(Duration.ofSeconds(30))
                    .headers(h -> h.set("Content-Type", "application/json"));
            FeedbackThroughputBenchmark bench = new FeedbackThroughputBenchmark(data, http, queryPort, clients,
                    warmImages, users, client);
            bench.register(adminPort, containers);
            bench.run(out, phases, warmupS, durationS, redis, floorRequests);
        } finally {
            // the gateway first: it holds connections to Redis and to the containers
            if (gateway != null) {
                gateway.close();
            }
            for (ModelContainer<float[], String> c : containers) {
                c.close();
            }
            for (OnnxPredictor p : predictors) {
                p.close();
            }
            pool.disposeLater().block(Duration.ofSeconds(10));
            redis.close();
        }
        System.exit(0);
    }

    // ------------------------------------------------------------------------------------------

    private void register(int adminPort, List<ModelContainer<float[], String>> containers) throws Exception {
        for (int i = 0; i < MODELS.size(); i++) {
            String m = MODELS.get(i);
            admin(adminPort, "add_model", Map.of("model_name", m, "model_version", "1", "input_type", "floats"));
            admin(adminPort, "add_container", Map.of("model_name", m, "model_version", "1",
                    "address", "127.0.0.1:" + containers.get(i).port()));
        }
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("name", APP);
        app.put("input_type", "floats");
        app.put("default_output", "-1");
        app.put("latency_slo_micros", SLO_MICROS);
        app.put("selection_policy", "exp4");
        admin(adminPort, "add_app", app);
        admin(adminPort, "add_model_links", Map.of("app_name", APP, "model_names", MODELS));
        for (String m : MODELS) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (get(queryPort, "/v2/models/" + m + "/ready").status() != 200) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException(m + " did not become ready through the gateway");
                }
                Thread.sleep(50);
            }
        }
    }

    private void admin(int port, String endpoint, Map<String, ?> body) {
        Response r = post(port, "/admin/" + endpoint, BenchOutput.json(body).getBytes(StandardCharsets.UTF_8))
                .block(Duration.ofSeconds(30));
        if (r == null || r.status() != 200) {
            throw new IllegalStateException("admin " + endpoint + " → " + r);
        }
    }

    private void run(Path out, List<String> phases, int warmupS, int durationS, RedisServer redis, int floorRequests)
            throws Exception {
        String redisUri = redis.uri();
        String loadAtStart = loadavg();
        // warm the prediction cache: every model's output for the first warmImages images. A model
        // output that misses the SLO under this burst is not cached, so repeat until a pass is all hits.
        long t0 = System.nanoTime();
        int batch = 25;
        long[] first = cacheCounters();
        long[] passStart = first;
        int passes = 0;
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger defaults = new AtomicInteger();
        while (true) {
            passes++;
            failed.set(0);
            defaults.set(0);
            Flux.range(0, (warmImages + batch - 1) / batch)
                    .flatMap(b -> post(queryPort, "/" + APP + "/predict",
                            batchBody(b * batch, Math.min(warmImages, (b + 1) * batch))).doOnNext(r -> {
                                if (r.status() != 200) {
                                    failed.addAndGet(batch);
                                } else {
                                    defaults.addAndGet(r.body().split("\"default\":true", -1).length - 1);
                                }
                            }), 2)
                    .blockLast(Duration.ofMinutes(5));
            long[] now = cacheCounters();
            long misses = now[1] - passStart[1];
            if ((passes > 1 && misses == 0 && failed.get() == 0) || passes == 10) {
                break;
            }
            passStart = now;
        }
        long[] after = cacheCounters();
        System.out.printf(Locale.ROOT, "warmed the prediction cache with %,d images through /%s/predict (batches of %d)"
                + " in %.1f s, %d passes, the last all hits: %s (last pass: %d failed, %d default answers;"
                + " cache lookups overall: %,d hits, %,d misses)%n", warmImages, APP, batch,
                (System.nanoTime() - t0) / 1e9, passes, after[1] == passStart[1] ? "yes" : "NO", failed.get(),
                defaults.get(), after[0] - first[0], after[1] - first[1]);

        List<Map<String, Object>> results = new ArrayList<>();
        for (String phase : phases) {
            Map<String, Object> r = switch (phase.trim()) {
                case "cache-hits" -> phase("cache-hits", "app-wide state; inputs predicted beforehand (cached)",
                        this::hitBody, warmImages, warmupS, durationS);
                case "cache-hits-per-user" -> phase("cache-hits-per-user", "uid = i % " + users
                        + " (one state per user); inputs predicted beforehand (cached)", this::perUserBody,
                        lcm(warmImages, users), warmupS, durationS);
                case "cache-misses" -> phase("cache-misses",
                        "app-wide state; every input never seen: the gateway queries the four models for the join",
                        this::missBody, 0, warmupS, durationS);
                case "predict-hits" -> phase(Endpoint.PREDICT, "predict-hits", "control: /" + APP
                        + "/predict of the inputs of cache-hits (cached), no feedback", this::predictBody,
                        warmImages, warmupS, durationS);
                default -> throw new IllegalArgumentException("unknown phase " + phase
                        + "; phases: cache-hits, cache-hits-per-user, cache-misses, predict-hits");
            };
            results.add(r);
            System.out.println(line(r));
        }

        Map<String, Object> floors = new LinkedHashMap<>();
        for (String phase : List.of("cache-hits", "cache-hits-per-user")) {
            if (rate(results, phase) > 0) {
                floors.put(phase, redisFloor(redis.port(), phase, floorRequests));
            }
        }

        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", "feedback-throughput");
        json.put("description", "closed-loop POST /" + APP + "/update {input, label} through the gateway; "
                + "feedback joins the remembered prediction of the input in its context, else the linked models' "
                + "predictions from the prediction cache (querying a model on a miss); selection states in Redis "
                + "(one observe script per update)");
        json.put("clipper_reference", "Clipper NSDI'17 4.2: about 6K feedback observations/s without, 11K with "
                + "prediction cache hits");
        Map<String, Object> setup = new LinkedHashMap<>();
        setup.put("app", APP + ": exp4 over " + MODELS + ", latency_slo_micros " + SLO_MICROS);
        setup.put("models", "four Fashion-MNIST ONNX models as in-process containers (OIP gRPC on loopback)");
        setup.put("selection_store", "redis (a real redis-server, " + redisUri + ")");
        setup.put("prediction_cache", "gateway default (enabled, 32MB)");
        setup.put("clients", clients);
        setup.put("warmup_s", warmupS);
        setup.put("duration_s", durationS);
        setup.put("warm_images", warmImages);
        setup.put("users", users);
        setup.put("client", client == LoadClient.WRK
                ? "cache-hit phases: wrk (a separate process, " + WRK_THREADS + " threads, " + clients + " connections);"
                        + " cache misses: a Reactor Netty client in the gateway's JVM"
                : "a Reactor Netty client in the gateway's JVM");
        setup.put("machine", Runtime.getRuntime().availableProcessors() + " CPUs, shared by the load generator, the "
                + "gateway and the model containers (one JVM) and redis-server");
        setup.put("loadavg_at_start", loadAtStart);
        setup.put("loadavg_at_end", loadavg());
        json.put("setup", setup);
        json.put("phases", results);
        json.put("redis_floor", floors);
        Map<String, Object> ratios = new LinkedHashMap<>();
        floors.forEach((phase, floor) -> {
            @SuppressWarnings("unchecked")
            double rps = (Double) ((Map<String, Object>) floor).get("requests_per_s");
            if (rps > 0) {
                ratios.put(phase.replace('-', '_') + "_over_redis_floor", rate(results, phase) / rps);
            }
        });
        double hits = rate(results, "cache-hits");
        double misses = rate(results, "cache-misses");
        double perUser = rate(results, "cache-hits-per-user");
        if (hits > 0 && misses > 0) {
            ratios.put("cache_hits_over_misses", hits / misses);
        }
        if (hits > 0 && perUser > 0) {
            ratios.put("per_user_over_app_wide", perUser / hits);
        }
        double control = rate(results, "predict-hits");
        if (control > 0) {
            // the control's answers per second: the ceiling of the same bodies through the same gateway
            if (hits > 0) {
                ratios.put("cache_hits_over_predict_control", hits / control);
            }
            if (perUser > 0) {
                ratios.put("cache_hits_per_user_over_predict_control", perUser / control);
            }
        }
        json.put("ratios", ratios);
        BenchOutput.write(out.resolve("feedback-throughput.json"), BenchOutput.json(json));
        System.out.println();
        floors.forEach((phase, floor) -> System.out.printf(Locale.ROOT, "redis floor for %s: %s%n", phase, floor));
        System.out.println(table(results, ratios));
        System.out.println("wrote " + out.resolve("feedback-throughput.json"));
    }

    /** A phase's obs/s; of a phase run more than once, the last (warmest) run's. */
    private static double rate(List<Map<String, Object>> results, String phase) {
        return results.stream().filter(r -> phase.equals(r.get("phase"))).mapToDouble(r -> (Double) r.get("obs_per_s"))
                .reduce((first, last) -> last).orElse(0);
    }

    private static String table(List<Map<String, Object>> results, Map<String, Object> ratios) {
        StringBuilder sb = new StringBuilder("Feedback throughput (POST /" + APP + "/update, exp4 over 4 ONNX models,"
                + " states in Redis)\n");
        sb.append(String.format(Locale.ROOT, "  %-22s %-6s %8s %10s %9s %9s %9s %8s %15s%n", "phase", "client", "clients", "obs/s",
                "p50 ms", "p99 ms", "max ms", "errors", "cache hit/miss"));
        for (Map<String, Object> r : results) {
            @SuppressWarnings("unchecked")
            Map<String, Object> lat = (Map<String, Object>) r.get("latency_ms");
            @SuppressWarnings("unchecked")
            Map<String, Object> cache = (Map<String, Object>) r.get("cache_lookups");
            sb.append(String.format(Locale.ROOT, "  %-22s %-6s %8d %10.0f %9.2f %9.2f %9.2f %8d %15s%n", r.get("phase"), r.get("client"),
                    (Integer) r.get("clients"), (Double) r.get("obs_per_s"), (Double) lat.get("p50"),
                    (Double) lat.get("p99"), (Double) lat.get("max"), (Long) r.get("errors"),
                    cache.get("hits") + "/" + cache.get("misses")));
        }
        ratios.forEach((k, v) -> sb.append(String.format(Locale.ROOT, "  %s: %.2f%n", k, (Double) v)));
        return sb.toString();
    }

    // ------------------------------------------------------------------------------------------
    // the raw Redis floor

    /**
     * Captures the Redis command one feedback of {@code phase} makes and replays it with
     * redis-benchmark: {requests_per_s, command, clients, requests}.
     */
    private Map<String, Object> redisFloor(int port, String phase, int requests) throws Exception {
        List<String> command = capture(port, "cache-hits".equals(phase) ? hitBody(0) : perUserBody(1));
        boolean perUser = !"cache-hits".equals(phase);
        if (perUser) {
            // EVALSHA sha numkeys key ...: a random user's key per command, as in the phase
            String key = command.get(3);
            command.set(3, key.substring(0, key.lastIndexOf(':') + 1) + "__rand_int__");
        }
        List<String> cmd = new ArrayList<>(List.of(tool("redis-benchmark"), "-p", Integer.toString(port),
                "-c", Integer.toString(clients), "-n", Integer.toString(requests), "--csv"));
        if (perUser) {
            cmd.addAll(List.of("-r", Integer.toString(users)));
        }
        cmd.addAll(command);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(5, TimeUnit.MINUTES);
        double rps = -1;
        for (String line : output.split("\n")) {
            String[] f = line.split("\",\"");
            if (f.length > 1 && !line.startsWith("\"test\"")) {
                rps = Double.parseDouble(f[1].replace("\"", ""));
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("requests_per_s", rps);
        m.put("clients", clients);
        m.put("requests", requests);
        m.put("command", abbreviate(String.join(" ", command)));
        if (rps < 0) {
            m.put("error", abbreviate(output));
        }
        return m;
    }

    /** The arguments of the first EVALSHA Redis sees while one feedback with {@code body} is answered. */
    private List<String> capture(int port, byte[] body) throws Exception {
        Process monitor = new ProcessBuilder(tool("redis-cli"), "-p", Integer.toString(port), "monitor")
                .redirectErrorStream(true).start();
        try {
            java.io.BufferedReader lines = new java.io.BufferedReader(
                    new java.io.InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8));
            if (!"OK".equals(lines.readLine())) {
                throw new IllegalStateException("redis-cli monitor did not start");
            }
            Response r = post(queryPort, "/" + APP + "/update", body).block(Duration.ofSeconds(30));
            if (r == null || r.status() != 200) {
                throw new IllegalStateException("feedback for the floor capture failed: " + r);
            }
            java.util.regex.Pattern arg = java.util.regex.Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");
            for (String line; (line = lines.readLine()) != null; ) {
                if (line.contains("\"EVALSHA\"") || line.contains("\"evalsha\"")) {
                    List<String> args = new ArrayList<>();
                    java.util.regex.Matcher m = arg.matcher(line);
                    while (m.find()) {
                        args.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
                    }
                    return args;
                }
            }
            throw new IllegalStateException("no EVALSHA seen");
        } finally {
            monitor.destroy();
        }
    }

    /** A Redis tool next to $REDIS_SERVER, else from the PATH. */
    private static String tool(String name) {
        String server = System.getenv("REDIS_SERVER");
        if (server != null && !server.isBlank()) {
            Path sibling = Path.of(server).resolveSibling(name);
            if (Files.isExecutable(sibling)) {
                return sibling.toString();
            }
        }
        return name;
    }

    // ------------------------------------------------------------------------------------------
    // request bodies

    /** {@code {"input_batch": [images from..to-1]}}. */
    private byte[] batchBody(int from, int to) {
        ByteArrayOutputStream b = new ByteArrayOutputStream((to - from) * (tails[from].length + 16));
        b.writeBytes("{\"input_batch\":[".getBytes(StandardCharsets.US_ASCII));
        for (int image = from; image < to; image++) {
            b.writeBytes(("[" + pixel0[image]).getBytes(StandardCharsets.US_ASCII));
            b.write(tails[image], 0, tails[image].length - 1); // ",p1,...,p783]" without the closing brace
            b.write(image + 1 < to ? ',' : ']');
        }
        b.write('}');
        return b.toByteArray();
    }

    private byte[] hitBody(long i) {
        int image = (int) (i % warmImages);
        return body(null, image, pixel0[image]);
    }

    /** {@code {"input": image}} of the images feedback of cache-hits is about. */
    private byte[] predictBody(long i) {
        int image = (int) (i % warmImages);
        ByteArrayOutputStream b = new ByteArrayOutputStream(tails[image].length + 32);
        b.writeBytes(("{\"input\":[" + pixel0[image]).getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(tails[image]);
        return b.toByteArray();
    }

    private byte[] perUserBody(long i) {
        int image = (int) (i % warmImages);
        return body(i % users, image, pixel0[image]);
    }

    /** The j-th input never seen: images warmImages..N-1, then all N again, pass r with pixel 0 + r·1e-5. */
    private byte[] missBody(long i) {
        long j = warmImages + i;
        int image = (int) (j % data.size());
        long pass = j / data.size();
        return body(null, image, pixel0[image] + pass * PERTURBATION);
    }

    private byte[] body(Long uid, int image, float p0) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(heads[image].length + tails[image].length + 32);
        b.write('{');
        if (uid != null) {
            b.writeBytes(("\"uid\":" + uid + ",").getBytes(StandardCharsets.US_ASCII));
        }
        b.writeBytes(heads[image]);
        b.writeBytes(Float.toString(p0).getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(tails[image]);
        return b.toByteArray();
    }

    // ------------------------------------------------------------------------------------------
    // the closed loop

    record Response(int status, String body) {
    }

    private Mono<Response> post(int port, String path, byte[] body) {
        return http.post().uri("http://127.0.0.1:" + port + path)
                .send(ByteBufFlux.fromInbound(Mono.just(body)))
                .responseSingle((res, buf) -> buf.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(s -> new Response(res.status().code(), s)));
    }

    /** A GET asking for Prometheus text (what /metrics answers otherwise is Clipper's JSON). */
    private Response get(int port, String path) {
        return http.headers(h -> h.set("Accept", "text/plain;version=0.0.4")).get()
                .uri("http://127.0.0.1:" + port + path)
                .responseSingle((res, buf) -> buf.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(s -> new Response(res.status().code(), s)))
                .onErrorResume(e -> Mono.just(new Response(-1, e.toString())))
                .block(Duration.ofSeconds(30));
    }

    /** {hits, misses} of the gateway's prediction cache so far. */
    private long[] cacheCounters() {
        Response r = get(queryPort, "/metrics");
        long[] out = new long[2];
        if (r == null || r.status() != 200) {
            return new long[] {-1, -1};
        }
        for (String line : r.body().split("\n")) {
            if (line.startsWith("servegate_cache_requests_total")) {
                long v = (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                if (line.contains("result=\"hit\"")) {
                    out[0] += v;
                } else if (line.contains("result=\"miss\"")) {
                    out[1] += v;
                }
            }
        }
        return out;
    }

    private static final class Client {
        long[] latencies = new long[1 << 14];
        int count;
        long errors;
        long warmupErrors;

        void record(long nanos) {
            if (count == latencies.length) {
                latencies = Arrays.copyOf(latencies, count * 2);
            }
            latencies[count++] = nanos;
        }
    }

    /**
     * One phase: with wrk when that is the client and the bodies repeat with {@code period}
     * (0: never, as for cache misses), else with the in-JVM client.
     */
    private Map<String, Object> phase(String name, String description, LongFunction<byte[]> bodies, int period,
            int warmupS, int durationS) throws Exception {
        return phase(Endpoint.UPDATE, name, description, bodies, period, warmupS, durationS);
    }

    private Map<String, Object> phase(Endpoint endpoint, String name, String description, LongFunction<byte[]> bodies,
            int period, int warmupS, int durationS) throws Exception {
        return client == LoadClient.WRK && period > 0
                ? wrkPhase(endpoint, name, description, bodies, period, warmupS, durationS)
                : jvmPhase(endpoint, name, description, bodies, warmupS, durationS).toJson();
    }

    /** Where a phase sends its bodies, and what a successful answer contains. */
    private enum Endpoint {
        UPDATE("update", "\"observed\":true"),
        PREDICT("predict", "\"default\":false");

        final String path;
        final String success;

        Endpoint(String path, String success) {
            this.path = "/" + APP + "/" + path;
            this.success = success;
        }
    }

    private static final int WRK_THREADS = 2;

    /**
     * wrk sends the {@code period} bodies in turn ({@link #WRK_SCRIPT}): a warm-up run, then the
     * measured one with its latency distribution. The gateway's own feedback counter is read
     * around both, as a check that every request wrk counted was an observation.
     */
    private Map<String, Object> wrkPhase(Endpoint endpoint, String name, String description,
            LongFunction<byte[]> bodies, int period, int warmupS, int durationS) throws Exception {
        Path file = Files.createTempFile("feedback-bodies", ".jsonl");
        try {
            try (var w = Files.newOutputStream(file)) {
                for (int i = 0; i < period; i++) {
                    w.write(bodies.apply(i));
                    w.write('\n');
                }
            }
            long[] cacheBefore = cacheCounters();
            long feedbackBefore = feedbackCounter();
            WrkRun warm = wrk(endpoint, file, warmupS, false);
            WrkRun run = wrk(endpoint, file, durationS, true);
            long feedback = feedbackCounter() - feedbackBefore;
            long[] cacheAfter = cacheCounters();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("phase", name);
            m.put("description", description);
            m.put("client", "wrk");
            m.put("clients", clients);
            m.put("warmup_s", warmupS);
            m.put("duration_s", durationS);
            long ok = run.requests() - run.errors();
            m.put("observations", ok);
            m.put("obs_per_s", ok / run.seconds());
            m.put("latency_ms", run.latencyMs());
            m.put("errors", run.errors());
            m.put("warmup_errors", warm.errors());
            m.put("error_samples", List.of());
            m.put("requests_sent_incl_warmup", warm.requests() + run.requests());
            m.put("gateway_feedback_counted", feedback);
            m.put("gateway_feedback_check", "the gateway's servegate_selection_feedback_total grew by " + feedback
                    + " over both wrk runs, which completed " + (warm.requests() + run.requests())
                    + " requests (up to " + 2 * clients + " more may have been in flight when wrk stopped)");
            Map<String, Object> cache = new LinkedHashMap<>();
            cache.put("hits", cacheAfter[0] - cacheBefore[0]);
            cache.put("misses", cacheAfter[1] - cacheBefore[1]);
            cache.put("note", "prediction cache lookups during the phase (warm-up included), 4 per update");
            m.put("cache_lookups", cache);
            return m;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** One wrk run's totals: requests, errors (non-2xx answers and socket errors), seconds, latency in ms. */
    private record WrkRun(long requests, long errors, double seconds, Map<String, Object> latencyMs) {
    }

    private WrkRun wrk(Endpoint endpoint, Path bodies, int seconds, boolean latency) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("wrk", "-t" + Math.min(WRK_THREADS, clients), "-c" + clients,
                "-d" + seconds + "s", "-s", WRK_SCRIPT.toString()));
        if (latency) {
            cmd.add("--latency");
        }
        cmd.addAll(List.of("http://127.0.0.1:" + queryPort + endpoint.path, "--", bodies.toString(),
                Integer.toString(Math.min(WRK_THREADS, clients))));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("wrk failed: " + abbreviate(out));
        }
        java.util.regex.Matcher total = java.util.regex.Pattern.compile("(\\d+) requests in ([\\d.]+)(m?s)")
                .matcher(out);
        if (!total.find()) {
            throw new IllegalStateException("no totals in wrk's output: " + abbreviate(out));
        }
        long requests = Long.parseLong(total.group(1));
        double runSeconds = Double.parseDouble(total.group(2)) / ("ms".equals(total.group(3)) ? 1000 : 1);
        long errors = 0;
        java.util.regex.Matcher non2xx = java.util.regex.Pattern.compile("Non-2xx or 3xx responses: (\\d+)")
                .matcher(out);
        if (non2xx.find()) {
            errors += Long.parseLong(non2xx.group(1));
        }
        java.util.regex.Matcher socket = java.util.regex.Pattern.compile(
                "Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)").matcher(out);
        if (socket.find()) {
            for (int g = 1; g <= 4; g++) {
                errors += Long.parseLong(socket.group(g));
            }
        }
        Map<String, Object> lat = new LinkedHashMap<>();
        for (String pct : List.of("50", "90", "99")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\s" + pct + "%\\s+([\\d.]+)(us|ms|s)\\b")
                    .matcher(out);
            lat.put("p" + pct, m.find() ? millis(m.group(1), m.group(2)) : Double.NaN);
        }
        java.util.regex.Matcher stats = java.util.regex.Pattern.compile(
                "Latency\\s+([\\d.]+)(us|ms|s)\\s+[\\d.]+(?:us|ms|s)\\s+([\\d.]+)(us|ms|s)").matcher(out);
        boolean found = stats.find();
        lat.put("max", found ? millis(stats.group(3), stats.group(4)) : Double.NaN);
        lat.put("mean", found ? millis(stats.group(1), stats.group(2)) : Double.NaN);
        return new WrkRun(requests, errors, runSeconds, lat);
    }

    private static double millis(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "us" -> v / 1000;
            case "s" -> v * 1000;
            default -> v;
        };
    }

    /** The period of the (image, user) pairs the per-user bodies cycle through. */
    private static int lcm(int a, int b) {
        int gcd = a;
        for (int r = b; r != 0; ) {
            int t = gcd % r;
            gcd = r;
            r = t;
        }
        return Math.toIntExact((long) a / gcd * b);
    }

    /** The gateway's feedback so far (servegate_selection_feedback_total, both kinds of join). */
    private long feedbackCounter() {
        Response r = get(queryPort, "/metrics");
        long total = 0;
        for (String line : r.body().split("\n")) {
            if (line.startsWith("servegate_selection_feedback_total")) {
                total += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return total;
    }

    private PhaseResult jvmPhase(Endpoint endpoint, String name, String description, LongFunction<byte[]> bodies,
            int warmupS, int durationS) throws InterruptedException {
        long[] cacheBefore = cacheCounters();
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmupS);
        long measureTo = measureFrom + TimeUnit.SECONDS.toNanos(durationS);
        AtomicLong seq = new AtomicLong();
        CountDownLatch done = new CountDownLatch(clients);
        ConcurrentLinkedQueue<String> samples = new ConcurrentLinkedQueue<>();
        List<Client> all = new ArrayList<>();
        String path = endpoint.path;
        for (int c = 0; c < clients; c++) {
            Client client = new Client();
            all.add(client);
            new Object() {
                void next() {
                    if (System.nanoTime() >= measureTo) {
                        done.countDown();
                        return;
                    }
                    byte[] body = bodies.apply(seq.getAndIncrement());
                    long sent = System.nanoTime();
                    post(queryPort, path, body).subscribe(
                            r -> complete(sent, r.status() == 200 && r.body().contains(endpoint.success)
                                    ? null : r.status() + " " + abbreviate(r.body())),
                            e -> complete(sent, e.toString()));
                }

                void complete(long sent, String error) {
                    long now = System.nanoTime();
                    boolean measured = now >= measureFrom && now < measureTo;
                    if (error != null) {
                        if (measured) {
                            client.errors++;
                        } else {
                            client.warmupErrors++;
                        }
                        if (samples.size() < 5) {
                            samples.add(error);
                        }
                    } else if (measured) {
                        client.record(now - sent);
                    }
                    next();
                }
            }.next();
        }
        if (!done.await(warmupS + durationS + 120, TimeUnit.SECONDS)) {
            samples.add("not every client finished within 120 s of the end");
        }
        long[] cacheAfter = cacheCounters();
        return new PhaseResult(name, description, clients, warmupS, durationS, all, List.copyOf(samples),
                cacheAfter[0] - cacheBefore[0], cacheAfter[1] - cacheBefore[1], seq.get());
    }

    private static String line(Map<String, Object> phase) {
        @SuppressWarnings("unchecked")
        Map<String, Object> lat = (Map<String, Object>) phase.get("latency_ms");
        @SuppressWarnings("unchecked")
        Map<String, Object> cache = (Map<String, Object>) phase.get("cache_lookups");
        @SuppressWarnings("unchecked")
        List<String> samples = (List<String>) phase.get("error_samples");
        return String.format(Locale.ROOT, "%s: %.0f obs/s, p50 %.2f ms, p99 %.2f ms, %d errors (%d in warm-up)%s;"
                + " cache lookups %d hits / %d misses%s", phase.get("phase"), (Double) phase.get("obs_per_s"),
                (Double) lat.get("p50"), (Double) lat.get("p99"), (Long) phase.get("errors"),
                (Long) phase.get("warmup_errors"), samples.isEmpty() ? "" : " e.g. " + samples.get(0), cache.get("hits"),
                cache.get("misses"), phase.containsKey("gateway_feedback_check")
                        ? "; " + phase.get("gateway_feedback_check") : "");
    }

    /** The machine's load averages (1, 5, 15 min) from /proc/loadavg, or "unknown". */
    private static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    private record PhaseResult(String name, String description, int clients, int warmupS, int durationS,
            List<Client> perClient, List<String> errorSamples, long cacheHits, long cacheMisses, long sent) {

        long[] sorted() {
            long[] all = new long[perClient.stream().mapToInt(c -> c.count).sum()];
            int k = 0;
            for (Client c : perClient) {
                System.arraycopy(c.latencies, 0, all, k, c.count);
                k += c.count;
            }
            Arrays.sort(all);
            return all;
        }

        static double pct(long[] sorted, double p) {
            if (sorted.length == 0) {
                return Double.NaN;
            }
            int i = (int) Math.ceil(p * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
        }

        Map<String, Object> toJson() {
            long[] s = sorted();
            long errors = perClient.stream().mapToLong(c -> c.errors).sum();
            long warmupErrors = perClient.stream().mapToLong(c -> c.warmupErrors).sum();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("phase", name);
            m.put("description", description);
            m.put("client", "jvm");
            m.put("clients", clients);
            m.put("warmup_s", warmupS);
            m.put("duration_s", durationS);
            m.put("observations", (long) s.length);
            m.put("obs_per_s", s.length / (double) durationS);
            Map<String, Object> lat = new LinkedHashMap<>();
            lat.put("p50", pct(s, 0.50));
            lat.put("p90", pct(s, 0.90));
            lat.put("p99", pct(s, 0.99));
            lat.put("max", s.length == 0 ? Double.NaN : s[s.length - 1] / 1e6);
            lat.put("mean", s.length == 0 ? Double.NaN : Arrays.stream(s).average().orElse(0) / 1e6);
            m.put("latency_ms", lat);
            m.put("errors", errors);
            m.put("warmup_errors", warmupErrors);
            m.put("error_samples", errorSamples);
            m.put("requests_sent_incl_warmup", sent);
            Map<String, Object> cache = new LinkedHashMap<>();
            cache.put("hits", cacheHits);
            cache.put("misses", cacheMisses);
            cache.put("note", "prediction cache lookups during the phase (warm-up included), 4 per update");
            m.put("cache_lookups", cache);
            return m;
        }
    }
}
