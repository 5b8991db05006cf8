package io.servegate.gateway.testsupport;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Plain HTTP load for the fault and overload tests: JDK client, real sockets, every outcome
 * recorded (status, default or not, latency, connection errors), nothing retried but the JDK
 * client's own race ({@link #closedLocally}).
 */
public final class HttpLoad {

    public static final JsonMapper JSON = JsonMapper.builder().build();
    /** A request the JDK client failed by its own race is sent at most this many times in all. */
    private static final int MAX_ATTEMPTS = 3;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final long epoch = System.nanoTime();
    private final AtomicLong clientRaces = new AtomicLong();

    /**
     * One request's fate.
     *
     * @param sentNanos when it was sent, since this load's start
     * @param status the HTTP status, or 0 when the connection failed ({@code error} says how, with its causes)
     */
    public record Outcome(long sentNanos, long latencyNanos, int status, JsonNode body, String retryAfter,
            String error, Object request) {

        Outcome(long sentNanos, long latencyNanos, int status, JsonNode body, String retryAfter, String error) {
            this(sentNanos, latencyNanos, status, body, retryAfter, error, null);
        }

        /** The same outcome, remembering what was sent. */
        public Outcome withRequest(Object sent) {
            return new Outcome(sentNanos, latencyNanos, status, body, retryAfter, error, sent);
        }

        public boolean isDefault() {
            return status == 200 && body != null && body.path("default").booleanValue();
        }

        public boolean predicted() {
            return status == 200 && body != null && body.has("output") && !body.path("default").booleanValue();
        }

        public String explanation() {
            return body == null ? null : body.path("default_explanation").asString(null);
        }

        public double latencyMillis() {
            return latencyNanos / 1e6;
        }
    }

    /** Nanoseconds since this load started. */
    public long now() {
        return System.nanoTime() - epoch;
    }

    /** POSTs {@code json} and records the outcome; never throws for HTTP or connection failures. */
    public Outcome post(String url, Object json) {
        long sent = System.nanoTime();
        try {
            return postAsync(url, json, sent, 1).get(); // never fails: every failure is an outcome
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(sent - epoch, System.nanoTime() - sent, 0, null, null, e.toString());
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** POSTs {@code json} without waiting: for open-loop load. */
    public CompletableFuture<Outcome> postAsync(String url, Object json) {
        return postAsync(url, json, System.nanoTime(), 1);
    }

    private CompletableFuture<Outcome> postAsync(String url, Object json, long sent, int attempt) {
        return http.sendAsync(request(url, json), HttpResponse.BodyHandlers.ofString())
                .handle((r, e) -> {
                    if (e == null) {
                        return CompletableFuture.completedFuture(outcome(sent, r));
                    }
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (closedLocally(cause) && attempt < MAX_ATTEMPTS) {
                        clientRaces.incrementAndGet();
                        return postAsync(url, json, sent, attempt + 1);
                    }
                    return CompletableFuture.completedFuture(
                            new Outcome(sent - epoch, System.nanoTime() - sent, 0, null, null, describe(cause)));
                }).thenCompose(f -> f);
    }

    /**
     * Whether the JDK client failed {@code e}'s exchange by closing its own connection ("connection
     * closed locally"): JDK 17's HTTP/1.1 pool can hand a kept-alive connection to the next request
     * while the pool's idle watcher still reads it, and when the server answers quickly the watcher
     * takes the answer for stray bytes and closes the connection (JDK-8338569, fixed in JDK 24). The
     * server did nothing wrong and was sent the request, so such a request is sent again, from its
     * first send's clock, and counted in {@link #clientRaces}; every other failure is recorded as it is.
     */
    static boolean closedLocally(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof IOException && "connection closed locally".equals(c.getMessage())) {
                return true;
            }
        }
        return false;
    }

    /** How many requests were sent again after the JDK client's own race ({@link #closedLocally}). */
    public long clientRaces() {
        return clientRaces.get();
    }

    /**
     * {@code e} and its causes, outermost first. The JDK client words the symptom ("HTTP/1.1 header
     * parser received no bytes") and keeps how the connection ended in the cause: an EOFException
     * where the peer closed it, "Connection reset" where it reset it.
     */
    static String describe(Throwable e) {
        StringBuilder s = new StringBuilder(e.toString());
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            s.append(" <- ").append(c);
        }
        return s.toString();
    }

    private static HttpRequest request(String url, Object json) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(json))).build();
    }

    private Outcome outcome(long sent, HttpResponse<String> r) {
        long latency = System.nanoTime() - sent;
        JsonNode body;
        try {
            body = JSON.readTree(r.body());
        } catch (RuntimeException e) {
            body = null;
        }
        return new Outcome(sent - epoch, latency, r.statusCode(), body,
                r.headers().firstValue("Retry-After").orElse(null), null);
    }

    /**
     * {@code clients} closed-loop clients, each sending {@code request.apply(client, i)} to
     * {@code url} back to back until {@code length} has passed.
     */
    public List<Outcome> closedLoop(String url, int clients, Duration length,
            BiFunction<Integer, Integer, Object> request) throws InterruptedException {
        List<Outcome> all = Collections.synchronizedList(new ArrayList<>());
        long until = System.nanoTime() + length.toNanos();
        CountDownLatch done = new CountDownLatch(clients);
        for (int c = 0; c < clients; c++) {
            int client = c;
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; System.nanoTime() < until; i++) {
                        Object body = request.apply(client, i);
                        Outcome o = post(url, body).withRequest(body);
                        all.add(o);
                        if (o.status() == 0) {
                            pause(); // the server is gone: do not spin on refused connections
                        }
                    }
                } finally {
                    done.countDown();
                }
            }, "load-" + c);
            t.setDaemon(true);
            t.start();
        }
        done.await();
        return new ArrayList<>(all);
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * At most 2 % of {@code outcomes} (scheduler stalls of a shared, loaded machine) were answered
     * later than SLO + 1 s: a gateway that waited for a broken part instead of its deadlines would
     * be late by seconds on every query that met the fault.
     */
    public static boolean answeredInTime(List<Outcome> outcomes, long sloMicros) {
        return count(outcomes, o -> o.latencyNanos() > (sloMicros + 1_000_000) * 1000) <= outcomes.size() / 50;
    }

    /** "p50 X ms, max Y ms" of the outcomes' latencies. */
    public static String latencies(List<Outcome> outcomes) {
        double[] ms = outcomes.stream().mapToDouble(Outcome::latencyMillis).sorted().toArray();
        return ms.length == 0 ? "no queries" : String.format(java.util.Locale.ROOT, "p50 %.0f ms, max %.0f ms",
                ms[ms.length / 2], ms[ms.length - 1]);
    }

    /** Polls {@code url} (an app's predict endpoint) until it answers with a prediction, for 30 s at most. */
    public void awaitPrediction(String url) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until) {
            if (post(url, java.util.Map.of("input", new float[] {0, 1, 0})).predicted()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no prediction from " + url);
    }

    /** Counts outcomes matching {@code p}. */
    public static long count(List<Outcome> outcomes, Predicate<Outcome> p) {
        return outcomes.stream().filter(p).count();
    }

    /** The outcomes sent in {@code [fromNanos, toNanos)} since the load's start. */
    public static List<Outcome> sentBetween(List<Outcome> outcomes, long fromNanos, long toNanos) {
        return outcomes.stream().filter(o -> o.sentNanos() >= fromNanos && o.sentNanos() < toNanos).toList();
    }
}
