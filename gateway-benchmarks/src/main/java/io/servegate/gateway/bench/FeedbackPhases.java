package io.servegate.gateway.bench;

import static io.servegate.gateway.bench.FeedbackThroughputBenchmark.APP;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import reactor.core.publisher.Flux;

/**
 * The phases of the feedback-throughput benchmark (see {@link FeedbackThroughputBenchmark}): the
 * prediction cache warmed with the first {@code warmImages} images, then each phase by name, its
 * load from wrk where its bodies repeat and that is the client, else from this JVM.
 */
final class FeedbackPhases {

    /** What sends the feedback of the cache-hit phases (cache misses always come from this JVM). */
    enum LoadClient {
        /** wrk, a separate process (C, epoll), 2 threads: the same machine, but not the gateway's JVM. */
        WRK,
        /** A Reactor Netty client in the gateway's JVM, as the first versions of this benchmark had. */
        JVM
    }

    private final FeedbackGatewayClient gateway;
    private final FeedbackBodies bodies;
    private final int warmImages;
    private final int users;
    private final LoadClient client;
    private final WrkPhase wrk;
    private final JvmPhase jvm;

    FeedbackPhases(FeedbackGatewayClient gateway, FeedbackBodies bodies, int clients, int warmImages, int users,
            LoadClient client) {
        this.gateway = gateway;
        this.bodies = bodies;
        this.warmImages = warmImages;
        this.users = users;
        this.client = client;
        wrk = new WrkPhase(gateway, clients);
        jvm = new JvmPhase(gateway, clients);
    }

    /**
     * Warms the prediction cache: every model's output for the first warmImages images. A model
     * output that misses the SLO under this burst is not cached, so repeat until a pass is all hits.
     */
    void warmCache() {
        long t0 = System.nanoTime();
        int batch = 25;
        long[] first = gateway.cacheCounters();
        long[] passStart = first;
        int passes = 0;
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger defaults = new AtomicInteger();
        while (true) {
            passes++;
            failed.set(0);
            defaults.set(0);
            Flux.range(0, (warmImages + batch - 1) / batch)
                    .flatMap(b -> gateway.post("/" + APP + "/predict",
                            bodies.batch(b * batch, Math.min(warmImages, (b + 1) * batch))).doOnNext(r -> {
                                if (r.status() != 200) {
                                    failed.addAndGet(batch);
                                } else {
                                    defaults.addAndGet(r.body().split("\"default\":true", -1).length - 1);
                                }
                            }), 2)
                    .blockLast(Duration.ofMinutes(5));
            long[] now = gateway.cacheCounters();
            long misses = now[1] - passStart[1];
            if ((passes > 1 && misses == 0 && failed.get() == 0) || passes == 10) {
                break;
            }
            passStart = now;
        }
        long[] after = gateway.cacheCounters();
        System.out.printf(Locale.ROOT, "warmed the prediction cache with %,d images through /%s/predict (batches of %d)"
                + " in %.1f s, %d passes, the last all hits: %s (last pass: %d failed, %d default answers;"
                + " cache lookups overall: %,d hits, %,d misses)%n", warmImages, APP, batch,
                (System.nanoTime() - t0) / 1e9, passes, after[1] == passStart[1] ? "yes" : "NO", failed.get(),
                defaults.get(), after[0] - first[0], after[1] - first[1]);
    }

    /** Runs the phase of this name and returns its result. */
    Map<String, Object> run(String phase, int warmupS, int durationS) throws Exception {
        return switch (phase.trim()) {
            case "cache-hits" -> run(FeedbackEndpoint.UPDATE, "cache-hits",
                    "app-wide state; inputs predicted beforehand (cached)", bodies::hit, warmImages, warmupS,
                    durationS);
            case "cache-hits-per-user" -> run(FeedbackEndpoint.UPDATE, "cache-hits-per-user", "uid = i % " + users
                    + " (one state per user); inputs predicted beforehand (cached)", bodies::perUser,
                    lcm(warmImages, users), warmupS, durationS);
            case "cache-misses" -> run(FeedbackEndpoint.UPDATE, "cache-misses",
                    "app-wide state; every input never seen: the gateway queries the four models for the join",
                    bodies::miss, 0, warmupS, durationS);
            case "predict-hits" -> run(FeedbackEndpoint.PREDICT, "predict-hits", "control: /" + APP
                    + "/predict of the inputs of cache-hits (cached), no feedback", bodies::predict,
                    warmImages, warmupS, durationS);
            default -> throw new IllegalArgumentException("unknown phase " + phase
                    + "; phases: cache-hits, cache-hits-per-user, cache-misses, predict-hits");
        };
    }

    /**
     * One phase: with wrk when that is the client and the bodies repeat with {@code period}
     * (0: never, as for cache misses), else with the in-JVM client.
     */
    private Map<String, Object> run(FeedbackEndpoint endpoint, String name, String description,
            LongFunction<byte[]> phaseBodies, int period, int warmupS, int durationS) throws Exception {
        return client == LoadClient.WRK && period > 0
                ? wrk.run(endpoint, name, description, phaseBodies, period, warmupS, durationS)
                : jvm.run(endpoint, name, description, phaseBodies, warmupS, durationS);
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
}
