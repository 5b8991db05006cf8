package io.servegate.loadgen.load;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.servegate.sim.workload.ModelChooser;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * Open Inference Protocol REST infer requests, {@code POST /v2/models/{name}/versions/{version}/infer},
 * each for a model version drawn by Zipf popularity (rank 0 the most popular) with one image from
 * a fixed set. The future completes with a {@link RankedAnswer}: a 200 is a prediction, a 503 or
 * 504 (no replica holds the model, or its deadline passed) is the gateway's default.
 */
public final class ZipfOipWorkload implements Workload, AutoCloseable {

    /** An answer and the popularity rank of the model version it was for. */
    public record RankedAnswer(int rank, GatewayAnswer answer) {
    }

    private final ConnectionProvider connections;
    private final HttpClient client;
    private final List<String> paths;
    private final ModelChooser chooser;
    private final SplittableRandom random;
    private final List<byte[]> bodies;

    /**
     * @param paths  the infer path of each model version, most popular first
     * @param images the inputs, one FP32 row each
     */
    public ZipfOipWorkload(String host, int port, List<String> paths, double zipfS, long seed, List<float[]> images,
            int maxConnections, Duration timeout) {
        this.connections = ConnectionProvider.builder("many-models").maxConnections(maxConnections)
                .pendingAcquireMaxCount(-1).pendingAcquireTimeout(timeout).build();
        this.client = HttpClient.create(connections).host(host).port(port).responseTimeout(timeout)
                .headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON));
        this.paths = List.copyOf(paths);
        this.chooser = ModelChooser.weighted(ModelChooser.zipf(paths.size(), zipfS));
        this.random = new SplittableRandom(seed);
        this.bodies = images.stream().map(ZipfOipWorkload::body).toList();
    }

    private static byte[] body(float[] image) {
        StringBuilder sb = new StringBuilder("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,")
                .append(image.length).append("],\"data\":[");
        for (int i = 0; i < image.length; i++) {
            sb.append(i == 0 ? "" : ",").append(image[i]);
        }
        return sb.append("]}]}").toString().getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public int inputsPerRequest() {
        return 1;
    }

    @Override
    public CompletableFuture<RankedAnswer> send() {
        int rank;
        synchronized (random) {
            rank = chooser.next(random);
        }
        byte[] body = bodies.get(ThreadLocalRandom.current().nextInt(bodies.size()));
        return client.post().uri(paths.get(rank))
                .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body)))
                .responseSingle((response, content) -> content.asByteArray().defaultIfEmpty(new byte[0])
                        .map(bytes -> {
                            int status = response.status().code();
                            GatewayAnswer answer = status == 503 || status == 504
                                    ? new GatewayAnswer(null, true, new String(bytes, StandardCharsets.UTF_8))
                                    : GatewayAnswer.parseOipInfer(status, bytes);
                            return new RankedAnswer(rank, answer);
                        }))
                .toFuture();
    }

    @Override
    public void close() {
        connections.disposeLater().block(Duration.ofSeconds(5));
    }
}
