package io.servegate.gateway.api;

import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/**
 * The query port's handler: queries ({@code POST /{app}/predict}, {@code /{app}/update} and the
 * OIP REST {@code infer} paths) go straight to the query routes' own handler, everything else
 * (health probes, actuator, metrics, the OIP metadata, unknown paths) through Spring's whole
 * chain. The routes and their filters are the same either way; a query skips only what it never
 * uses: the dispatcher's handler mappings (the actuator's asked first), the web filters that guard
 * {@code /metrics} and {@code /actuator}, and the framework's own error handlers behind the
 * gateway's JSON one.
 */
public final class QueryRoutesFirst implements HttpHandler {

    private static final String OIP_MODELS = "/v2/models/";

    private final HttpHandler queries;
    private final HttpHandler rest;

    /**
     * @param queries the query routes as a handler of their own
     * @param rest    Spring's handler for the port, which serves the same routes among the others
     */
    public QueryRoutesFirst(HttpHandler queries, HttpHandler rest) {
        this.queries = queries;
        this.rest = rest;
    }

    @Override
    public Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response) {
        return request.getMethod() == HttpMethod.POST && isQuery(request.getPath().pathWithinApplication().value())
                ? queries.handle(request, response) : rest.handle(request, response);
    }

    /** Whether a POST to {@code path} is a query: one the query routes take before any other. */
    static boolean isQuery(String path) {
        if (path.startsWith(OIP_MODELS)) {
            return path.endsWith("/infer");
        }
        int second = path.indexOf('/', 1);
        // /{app}/predict or /{app}/update; /actuator/... stays with the chain, whose filters guard it
        return path.startsWith("/") && second > 1 && path.indexOf('/', second + 1) < 0
                && !path.startsWith("/actuator/")
                && (path.endsWith("/predict") || path.endsWith("/update"));
    }
}
