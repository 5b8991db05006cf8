package io.servegate.loadgen.load;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * One request with a single fresh random input through the gateway's query port, on a
 * non-blocking Reactor Netty client with a pool of keep-alive connections: Clipper's
 * {@code POST /{app}/predict}, or the Open Inference Protocol's {@code POST /v2/models/{model}/infer}
 * ({@link #oipRest}). The future completes with a {@link GatewayAnswer} (a default output is an
 * answer, not a failure); non-200 statuses and transport failures complete it exceptionally.
 */
public final class GatewayPredictWorkload implements Workload, AutoCloseable {

    private final ConnectionProvider connections;
    private final HttpClient client;
    private final String path;
    private final Supplier<byte[]> bodies;
    private final boolean oip;

    /**
     * @param maxConnections the pool's size; requests beyond it wait for a connection (without limit)
     * @param timeout per request: waiting for a connection, and then for the response
     */
    public GatewayPredictWorkload(String host, int port, String app, RandomInputs inputs, int maxConnections,
            Duration timeout) {
        this(host, port, "/" + app + "/predict", false, inputs::queryBody, maxConnections, timeout);
    }

    /**
     * Clipper's {@code POST /{app}/predict} with the bodies {@code bodies} makes, one per request
     * (e.g. {@link RandomInputs#bytesQueryBody}).
     */
    public static GatewayPredictWorkload clipper(String host, int port, String app, Supplier<byte[]> bodies,
            int maxConnections, Duration timeout) {
        return new GatewayPredictWorkload(host, port, "/" + app + "/predict", false, bodies, maxConnections, timeout);
    }

    /**
     * {@code POST /v2/models/{model}/infer} (one FP32 row per request); a 200 answer is a
     * prediction (the protocol has no default outputs: a missed deadline is a 504).
     */
    public static GatewayPredictWorkload oipRest(String host, int port, String model, RandomInputs inputs,
            int maxConnections, Duration timeout) {
        return new GatewayPredictWorkload(host, port, "/v2/models/" + model + "/infer", true, inputs::oipInferBody,
                maxConnections, timeout);
    }

    private GatewayPredictWorkload(String host, int port, String path, boolean oip, Supplier<byte[]> bodies,
            int maxConnections, Duration timeout) {
        this.connections = ConnectionProvider.builder("loadgen")
                .maxConnections(maxConnections)
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(timeout)
                .build();
        this.client = HttpClient.create(connections)
                .host(host)
                .port(port)
                .responseTimeout(timeout)
                .headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON));
        this.path = path;
        this.oip = oip;
        this.bodies = bodies;
    }

    @Override
    public int inputsPerRequest() {
        return 1;
    }

    @Override
    public CompletableFuture<GatewayAnswer> send() {
        byte[] body = bodies.get();
        return client.post()
                .uri(path)
                .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body)))
                .responseSingle((response, content) -> content.asByteArray()
                        .defaultIfEmpty(new byte[0])
                        .map(bytes -> oip ? GatewayAnswer.parseOipInfer(response.status().code(), bytes)
                                : GatewayAnswer.parse(response.status().code(), bytes)))
                .toFuture();
    }

    /** Closes the pooled connections. */
    @Override
    public void close() {
        connections.disposeLater().block(Duration.ofSeconds(5));
    }
}
