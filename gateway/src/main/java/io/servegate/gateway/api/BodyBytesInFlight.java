package io.servegate.gateway.api;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.config.ServegateProperties;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
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
 * <p>Each client (remote address) holds at most its share of the budget ({@link ClientShares}): one
 * more request with a body gets 429.
 */
public final class BodyBytesInFlight implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    private final long budget;
    private final long maxBody;
    private final AtomicLong inFlight;
    private final ClientShares clients;
    private final Counter refused;

    /**
     * @param port        the port's name in metrics
     * @param budget      most body bytes the port's requests may hold at once
     * @param clientShare most body bytes the requests of one remote address may hold at once
     * @param maxBody     the largest body a request may have
     */
    public BodyBytesInFlight(String port, long budget, long clientShare, long maxBody, MeterRegistry meters) {
        this.budget = budget;
        this.maxBody = maxBody;
        this.inFlight = gauge(port, meters);
        this.clients = new ClientShares(port, clientShare, meters);
        this.refused = refusedCounter(port, meters);
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

    /**
     * A port's limits on request bytes in flight, the same for its HTTP and gRPC admission.
     *
     * @param budget      {@code servegate.connections.max-body-bytes-in-flight}, or where 0 a quarter of
     *     the heap; at least one largest body
     * @param clientShare {@code max-body-bytes-in-flight-per-client}, or where 0 half the budget; at
     *     least one largest body
     * @param maxBody     {@code servegate.limits.max-body-size}
     */
    record Limits(long budget, long clientShare, long maxBody) {

        static Limits of(ServegateProperties props) {
            long maxBody = props.limits().maxBodySize().toBytes();
            long configured = props.connections().maxBodyBytesInFlight().toBytes();
            long budget = Math.max(maxBody, configured > 0 ? configured : Runtime.getRuntime().maxMemory() / 4);
            long perClient = props.connections().maxBodyBytesInFlightPerClient().toBytes();
            return new Limits(budget, Math.max(maxBody, perClient > 0 ? perClient : budget / 2), maxBody);
        }
    }

    /**
     * The admission of the HTTP port named {@code port}, within {@code servegate.connections.max-body-bytes-in-flight}
     * and, per client, {@code max-body-bytes-in-flight-per-client}.
     */
    public static BodyBytesInFlight of(ServegateProperties props, String port, MeterRegistry meters) {
        Limits limits = Limits.of(props);
        return new BodyBytesInFlight(port, limits.budget(), limits.clientShare(), limits.maxBody(), meters);
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        long bytes = reservation(request.headers().asHttpHeaders());
        if (bytes == 0) {
            return next.handle(request);
        }
        InetAddress client = request.remoteAddress().map(InetSocketAddress::getAddress).orElse(null);
        if (client != null && !clients.reserve(client, bytes)) {
            clients.refused();
            return Errors.retryLater(HttpStatus.TOO_MANY_REQUESTS, 1, "too many requests",
                    "too many request bytes in flight from this client (its share is " + clients.share()
                            + " bytes); retry once its earlier requests are answered", Errors.Shape.CLIPPER);
        }
        if (inFlight.addAndGet(bytes) > budget) {
            inFlight.addAndGet(-bytes);
            clients.release(client, bytes);
            refused.increment();
            return Errors.json(HttpStatus.SERVICE_UNAVAILABLE, "overloaded",
                    "too many request bytes in flight on this port; retry shortly");
        }
        return Mono.defer(() -> next.handle(request)).doFinally(s -> {
            inFlight.addAndGet(-bytes);
            clients.release(client, bytes);
        });
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
