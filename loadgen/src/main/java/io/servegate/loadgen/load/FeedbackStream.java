package io.servegate.loadgen.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Clipper feedback ({@code POST /{app}/update}, a random input and a label) sent at a fixed rate
 * to several gateways in turn, skipping those {@link #markDown marked down}. It counts the
 * feedback the gateways acknowledged (200 with {@code "observed": true}), refused (any other
 * status) and never answered (transport failures), so that a run can check that everything
 * acknowledged was stored: the app-wide state's observation count must reach the acknowledged
 * count ({@link #observations}).
 */
public final class FeedbackStream implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final String host;
    private final List<Integer> ports;
    private final String app;
    private final RandomInputs inputs;
    private final Duration timeout;
    private final AtomicIntegerArray down;
    private final AtomicLong turn = new AtomicLong();
    private final LongAdder sent = new LongAdder();
    private final LongAdder acknowledged = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder unanswered = new LongAdder();
    private final LongAdder outstanding = new LongAdder();
    private ScheduledExecutorService timer;

    public FeedbackStream(String host, List<Integer> ports, String app, RandomInputs inputs, Duration timeout) {
        this.host = host;
        this.ports = List.copyOf(ports);
        this.app = app;
        this.inputs = inputs;
        this.timeout = timeout;
        this.down = new AtomicIntegerArray(ports.size());
    }

    /** Starts sending {@code perSecond} feedback per second until {@link #stop}. */
    public void start(double perSecond) {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "feedback");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleAtFixedRate(this::sendOne, 0, Math.round(1e9 / perSecond), TimeUnit.NANOSECONDS);
    }

    /** Sends nothing more to gateway {@code i}. */
    public void markDown(int i) {
        down.set(i, 1);
    }

    private void sendOne() {
        Integer port = null;
        for (int tries = 0; tries < ports.size() && port == null; tries++) {
            int i = (int) Math.floorMod(turn.getAndIncrement(), (long) ports.size());
            port = down.get(i) == 0 ? ports.get(i) : null;
        }
        if (port == null) {
            return;
        }
        sent.increment();
        outstanding.increment();
        update(port).whenComplete((observations, failure) -> {
            if (failure != null) {
                unanswered.increment();
            } else if (observations < 0) {
                refused.increment();
            } else {
                acknowledged.increment();
            }
            outstanding.decrement();
        });
    }

    /** One feedback; completes with the state's observation count, or -1 if it was not acknowledged. */
    private CompletableFuture<Long> update(int port) {
        String body = "{\"input\":" + Arrays.toString(inputs.vector()) + ",\"label\":1}";
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/" + app + "/update"))
                .timeout(timeout).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
            if (r.statusCode() != 200) {
                return -1L;
            }
            try {
                JsonNode n = JSON.readTree(r.body());
                return n.path("observed").asBoolean(false) ? n.path("observations").asLong(-1) : -1L;
            } catch (IOException e) {
                return -1L;
            }
        });
    }

    /** Stops sending and waits up to {@code drain} for the answers outstanding. */
    public void stop(Duration drain) throws InterruptedException {
        timer.shutdownNow();
        long until = System.nanoTime() + drain.toNanos();
        while (outstanding.sum() > 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
    }

    /**
     * The observations the app-wide state holds, read by sending one more feedback to gateway
     * {@code i} (which is itself counted): its answer is the count including it.
     */
    public long observations(int i) throws Exception {
        long n = update(ports.get(i)).get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        if (n < 0) {
            throw new IOException("the gateway on port " + ports.get(i) + " did not acknowledge feedback");
        }
        return n - 1;
    }

    /** @param sent feedback sent; acknowledged, refused and unanswered add up to it once drained */
    public record Counts(long sent, long acknowledged, long refused, long unanswered) {
    }

    public Counts counts() {
        return new Counts(sent.sum(), acknowledged.sum(), refused.sum(), unanswered.sum());
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
