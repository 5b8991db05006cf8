package io.servegate.gateway.bench;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.bench.BenchOutput.Args;
import io.servegate.gateway.bench.FeedbackPhases.LoadClient;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
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
 * C process, {@value WrkPhase#THREADS} threads, {@code --clients} connections, bodies cycled by
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
 *
 * <p>This class starts and stops what the benchmark runs on; {@link FeedbackPhases} runs the
 * phases ({@link WrkPhase}, {@link JvmPhase}) with the bodies of {@link FeedbackBodies} through
 * {@link FeedbackGatewayClient}, {@link RedisFloor} measures the floor and {@link FeedbackReport}
 * writes the results.
 */
public final class FeedbackThroughputBenchmark {

    static final Path MODELS_DIR = Path.of("../containers/onnx/models");
    static final List<String> MODELS = List.of("fmnist-cnn", "fmnist-mlp", "fmnist-logreg", "fmnist-tiny");
    static final String APP = "fb";
    static final long SLO_MICROS = 1_000_000;

    private FeedbackThroughputBenchmark() {
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
        LoadClient loadClient = LoadClient.valueOf(args.string("client", "wrk").toUpperCase(Locale.ROOT));
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
            FeedbackGatewayClient client = new FeedbackGatewayClient(http, queryPort);
            FeedbackBodies bodies = new FeedbackBodies(data, warmImages, users);
            client.register(adminPort, APP, MODELS, containers, SLO_MICROS);
            run(out, phases, warmupS, durationS, redis, floorRequests,
                    new FeedbackPhases(client, bodies, clients, warmImages, users, loadClient),
                    new RedisFloor(client, bodies, clients, users),
                    setup -> FeedbackReport.setup(redis.uri(), clients, warmupS, durationS, warmImages, users,
                            loadClient, setup));
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

    /**
     * The cache warmed, every phase in order, the Redis floor of each cache-hit phase that ran, then
     * the report ({@code setup}: the run's setup, given the load average at its start).
     */
    private static void run(Path out, List<String> phases, int warmupS, int durationS, RedisServer redis,
            int floorRequests, FeedbackPhases runner, RedisFloor floor, Function<String, Map<String, Object>> setup)
            throws Exception {
        String loadAtStart = FeedbackReport.loadavg();
        runner.warmCache();
        List<Map<String, Object>> results = new ArrayList<>();
        for (String phase : phases) {
            Map<String, Object> r = runner.run(phase, warmupS, durationS);
            results.add(r);
            System.out.println(FeedbackReport.line(r));
        }
        Map<String, Object> floors = new LinkedHashMap<>();
        for (String phase : List.of("cache-hits", "cache-hits-per-user")) {
            if (FeedbackReport.rate(results, phase) > 0) {
                floors.put(phase, floor.measure(redis.port(), phase, floorRequests));
            }
        }
        FeedbackReport.write(out, setup.apply(loadAtStart), results, floors);
    }
}
