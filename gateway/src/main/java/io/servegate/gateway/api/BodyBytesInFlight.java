package io.servegate.gateway.api;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Admission by request-body bytes on an HTTP port: every request with a body reserves what it may
 * hold in memory (its {@code Content-Length}, or the largest body allowed when it is chunked)
 * before its body is read, and gives it back once answered. A request that would take the port's
 * bytes in flight over the budget gets 503 at once, before any of its body is read, so that
 * concurrent large bodies are refused by admission rather than by an OutOfMemoryError that would
 * take every other client's query with it. Counted in {@code servegate.connections.body.refused}.
 *
 * <p>Each client (remote address) holds at most its share of the budget: one more request with a
 * body gets 429, counted in {@code servegate.connections.body.client.refused}, so that one client's
 * large bodies leave room for the others'. The map of clients holds only those with bytes in
 * flight, so it is bounded by the port's connections.
 */
public final class BodyBytesInFlight implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    private final long budget;
    private final long clientShare;
    private final long maxBody;
    private final AtomicLong inFlight;
    private final Map<InetAddress, Long> byClient = new ConcurrentHashMap<>();
    private final Counter refused;
    private final Counter clientRefused;

    /**
     * @param port        the port's name in metrics
     * @param budget      most body bytes the port's requests may hold at once
     * @param clientShare most body bytes the requests of one remote address may hold at once
     * @param maxBody     the largest body a request may have
     */
    public BodyBytesInFlight(String port, long budget, long clientShare, long maxBody, MeterRegistry meters) {
        this.budget = budget;
        this.clientShare = clientShare;
        this.maxBody = maxBody;
        this.inFlight = gauge(port, meters);
        this.refused = refusedCounter(port, meters);
        this.clientRefused = Counter.builder("servegate.connections.body.client.refused")
                .description("requests refused with 429 because their client's body bytes in flight were at its share")
                .tag("port", port).register(meters);
    }

    /** The bytes in flight of a port (HTTP or gRPC), as {@code servegate.connections.body.bytes}. */
    static AtomicLong gauge(String port, MeterRegistry meters) {
        AtomicLong inFlight = new AtomicLong();
        Gauge.builder("servegate.connections.body.bytes", inFlight, AtomicLong::get)
                .description("request-body bytes admitted and not yet answered").tag("port", port).register(meters);
        return inFlight;
    }

    /** The refusals of a port (HTTP 503, gRPC RESOURCE_EXHAUSTED), as {@code servegate.connections.body.refused}. */
    static Counter refusedCounter(String port, MeterRegistry meters) {
        return Counter.builder("servegate.connections.body.refused")
                .description("requests refused (HTTP 503, gRPC RESOURCE_EXHAUSTED) because the port's body bytes "
                        + "in flight were at the budget")
                .tag("port", port).register(meters);
    }

    /** The budget of a port: {@code configured}, or where 0 a quarter of the heap; at least one largest body. */
    public static long budget(long configured, long maxBody) {
        return Math.max(maxBody, configured > 0 ? configured : Runtime.getRuntime().maxMemory() / 4);
    }

    /** One client's share of a port's budget: {@code configured}, or where 0 half the budget; at least one largest body. */
    public static long clientShare(long configured, long budget, long maxBody) {
        return Math.max(maxBody, configured > 0 ? configured : budget / 2);
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        long bytes = reservation(request.headers().asHttpHeaders());
        if (bytes == 0) {
            return next.handle(request);
        }
        InetAddress client = request.remoteAddress().map(InetSocketAddress::getAddress).orElse(null);
        if (client != null && !reserve(client, bytes)) {
            clientRefused.increment();
            return ServerResponse.status(HttpStatus.TOO_MANY_REQUESTS).header(HttpHeaders.RETRY_AFTER, "1")
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(Errors.body("too many requests",
                            "too many request bytes in flight from this client (its share is " + clientShare
                                    + " bytes); retry once its earlier requests are answered", Errors.Shape.CLIPPER));
        }
        if (inFlight.addAndGet(bytes) > budget) {
            inFlight.addAndGet(-bytes);
            release(client, bytes);
            refused.increment();
            return Errors.json(HttpStatus.SERVICE_UNAVAILABLE, "overloaded",
                    "too many request bytes in flight on this port; retry shortly");
        }
        return Mono.defer(() -> next.handle(request)).doFinally(s -> {
            inFlight.addAndGet(-bytes);
            release(client, bytes);
        });
    }

    /** Adds {@code bytes} to the client's, unless that would take it over its share. */
    private boolean reserve(InetAddress client, long bytes) {
        boolean[] admitted = {false};
        byClient.compute(client, (c, held) -> {
            long now = held == null ? 0 : held;
            if (now + bytes > clientShare) {
                return held;
            }
            admitted[0] = true;
            return now + bytes;
        });
        return admitted[0];
    }

    /** Gives the client's bytes back; a client with none left is forgotten. */
    private void release(InetAddress client, long bytes) {
        if (client != null) {
            byClient.computeIfPresent(client, (c, held) -> held == bytes ? null : held - bytes);
        }
    }

    /** What a request's body may hold: none without a body; beyond the largest body, the codec refuses it at that size. */
    private long reservation(HttpHeaders headers) {
        long length = headers.getContentLength();
        if (length >= 0) {
            return Math.min(length, maxBody);
        }
        return headers.getFirst(HttpHeaders.TRANSFER_ENCODING) != null ? maxBody : 0;
    }

    /** Body bytes admitted and not yet answered. */
    public long inFlight() {
        return inFlight.get();
    }
}
