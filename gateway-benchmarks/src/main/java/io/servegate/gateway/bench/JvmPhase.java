package io.servegate.gateway.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * A phase of the feedback-throughput benchmark loaded from this JVM: {@code clients} closed
 * loops on a Reactor Netty client, each sending its next body when the previous one is answered,
 * for the warm-up then the measured seconds.
 */
final class JvmPhase {

    private final FeedbackGatewayClient gateway;
    private final int clients;

    JvmPhase(FeedbackGatewayClient gateway, int clients) {
        this.gateway = gateway;
        this.clients = clients;
    }

    /** One client's measured latencies and errors. */
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

    Map<String, Object> run(FeedbackEndpoint endpoint, String name, String description, LongFunction<byte[]> bodies,
            int warmupS, int durationS) throws InterruptedException {
        long[] cacheBefore = gateway.cacheCounters();
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
                    gateway.post(path, body).subscribe(
                            r -> complete(sent, r.status() == 200 && r.body().contains(endpoint.success)
                                    ? null : r.status() + " " + FeedbackGatewayClient.abbreviate(r.body())),
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
        long[] cacheAfter = gateway.cacheCounters();
        return new Result(name, description, clients, warmupS, durationS, all, List.copyOf(samples),
                cacheAfter[0] - cacheBefore[0], cacheAfter[1] - cacheBefore[1], seq.get()).toJson();
    }

    private record Result(String name, String description, int clients, int warmupS, int durationS,
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
