package io.servegate.loadgen.harness;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.servegate.oip.client.Completion;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The floor the gateway's cost per query is measured against: the same stack with nothing but the
 * work every answer needs. Reactor Netty HTTP in ({@code POST /{app}/predict}, body
 * {@code {"input": [floats]}}, parsed to a {@code float[]} with a streaming parser; or with
 * {@code Content-Type: application/octet-stream} the body's bytes as one {@code bytes} input), one
 * OIP {@code ModelInfer} per request over the gateway's own {@link ContainerClient}, and the
 * answer written as the gateway writes it ({@code query_id}, {@code output}, {@code default}).
 * No cache, no scheduling, no batching, no metrics, no deadline other than the call's timeout.
 *
 * <p>Run as a child process ({@link FloorProcess}) so that its CPU time is its own:
 * {@code java -cp loadgen.jar io.servegate.loadgen.harness.FloorServer PORT CONTAINER MODEL}.
 */
public final class FloorServer implements AutoCloseable {

    private static final JsonFactory JSON = new JsonFactory();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final ContainerClient client;
    private final String model;
    private final DisposableServer server;
    private final AtomicLong queryIds = new AtomicLong();

    /** Listens on {@code host:port} (0 for any free port) and sends each input to the container at {@code container}. */
    public FloorServer(String host, int port, String container, String model) {
        // completed where the answer is read, as the gateway's replica clients are
        this.client = ContainerClient.connect(container, Completion.EVENT_LOOP);
        this.model = model;
        this.server = HttpServer.create().host(host).port(port)
                .route(routes -> routes.post("/{app}/predict", this::predict))
                .bindNow();
    }

    public int port() {
        return server.port();
    }

    private Mono<Void> predict(HttpServerRequest request, HttpServerResponse response) {
        String contentType = request.requestHeaders().get(HttpHeaderNames.CONTENT_TYPE);
        if (contentType != null && contentType.startsWith("application/octet-stream")) {
            return request.receive().aggregate().asByteArray()
                    .switchIfEmpty(Mono.error(new IOException("empty body")))
                    .flatMap(input -> answer(response, TensorType.BYTES, input));
        }
        return request.receive().aggregate().asInputStream()
                .switchIfEmpty(Mono.error(new IOException("empty body")))
                .flatMap(body -> {
                    float[] input;
                    try (InputStream in = body) {
                        input = parseInput(in);
                    } catch (IOException | RuntimeException e) {
                        return answer(response, HttpResponseStatus.BAD_REQUEST, "{\"error\":\"bad input\"}");
                    }
                    return answer(response, TensorType.FLOATS, input);
                });
    }

    /** One call with {@code input}, its output written as the answer. */
    private <X> Mono<Void> answer(HttpServerResponse response, TensorType<X> type, X input) {
        return Mono.fromFuture(client.inferAsText(model, "", type, List.of(input), TIMEOUT))
                .flatMap(result -> answer(response, HttpResponseStatus.OK,
                        render(queryIds.getAndIncrement(), result.outputs().get(0))))
                .onErrorResume(e -> answer(response, HttpResponseStatus.BAD_GATEWAY,
                        "{\"error\":\"container call failed\"}"));
    }

    private static Mono<Void> answer(HttpServerResponse response, HttpResponseStatus status, Object body) {
        ByteBuf buf = body instanceof ByteBuf b ? b : Unpooled.wrappedBuffer(((String) body).getBytes());
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .sendObject(buf).then();
    }

    /** The numbers of the body's {@code input} array. */
    static float[] parseInput(InputStream in) throws IOException {
        try (JsonParser p = JSON.createParser(in)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not an object");
            }
            float[] values = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.getCurrentName();
                JsonToken t = p.nextToken();
                if ("input".equals(name) && t == JsonToken.START_ARRAY) {
                    float[] buf = new float[16];
                    int n = 0;
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        if (!p.currentToken().isNumeric()) {
                            throw new IOException("not a number");
                        }
                        if (n == buf.length) {
                            buf = Arrays.copyOf(buf, n * 2);
                        }
                        buf[n++] = p.getFloatValue();
                    }
                    values = Arrays.copyOf(buf, n);
                } else {
                    p.skipChildren();
                }
            }
            if (values == null || values.length == 0) {
                throw new IOException("no input");
            }
            return values;
        }
    }

    private static ByteBuf render(long queryId, String output) {
        ByteBuf buf = Unpooled.buffer(64 + output.length());
        try (OutputStream out = new ByteBufOutputStream(buf); JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("query_id", queryId);
            g.writeStringField("output", output);
            g.writeBooleanField("default", false);
            g.writeEndObject();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return buf;
    }

    @Override
    public void close() {
        server.disposeNow();
        client.close();
    }

    /** {@code PORT CONTAINER MODEL}: serves until killed; prints {@code listening on PORT} once bound. */
    public static void main(String[] args) throws InterruptedException {
        if (args.length != 3) {
            System.err.println("usage: FloorServer PORT CONTAINER_HOST:PORT MODEL");
            System.exit(2);
        }
        FloorServer floor = new FloorServer(GatewayProcess.HOST, Integer.parseInt(args[0]), args[1], args[2]);
        System.out.println("listening on " + floor.port());
        System.out.flush();
        floor.server.onDispose().block();
    }
}
