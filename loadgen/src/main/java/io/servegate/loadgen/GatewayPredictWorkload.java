package io.servegate.loadgen;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * One {@code POST /{app}/predict} with a single fresh random input per request, through the
 * gateway's query port, on a non-blocking Reactor Netty client with a pool of keep-alive
 * connections. The future completes with a {@link GatewayAnswer} (a default output is an answer,
 * not a failure); non-200 statuses and transport failures complete it exceptionally.
 */
public final class GatewayPredictWorkload implements Workload, AutoCloseable {

    private final ConnectionProvider connections;
    private final HttpClient client;
    private final String path;
    private final RandomInputs inputs;

    /**
     * @param maxConnections the pool's size; requests beyond it wait for a connection (without limit)
     * @param timeout per request: waiting for a connection, and then for the response
     */
    public GatewayPredictWorkload(String host, int port, String app, RandomInputs inputs, int maxConnections,
            Duration timeout) {
        this.connections = ConnectionProvider.builder("loadgen-" + app)
                .maxConnections(maxConnections)
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(timeout)
                .build();
        this.client = HttpClient.create(connections)
                .host(host)
                .port(port)
                .responseTimeout(timeout)
                .headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON));
        this.path = "/" + app + "/predict";
        this.inputs = inputs;
    }

    @Override
    public int inputsPerRequest() {
        return 1;
    }

    @Override
    public CompletableFuture<GatewayAnswer> send() {
        byte[] body = inputs.queryBody();
        return client.post()
                .uri(path)
                .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body)))
                .responseSingle((response, content) -> content.asByteArray()
                        .defaultIfEmpty(new byte[0])
                        .map(bytes -> GatewayAnswer.parse(response.status().code(), bytes)))
                .toFuture();
    }

    /** Closes the pooled connections. */
    @Override
    public void close() {
        connections.disposeLater().block(Duration.ofSeconds(5));
    }
}
