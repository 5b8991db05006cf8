package io.servegate.gateway.api;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.servegate.gateway.query.InputRejectedException;
import io.servegate.gateway.query.OverloadRejectedException;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.gateway.tracing.TraceHeaders;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * The server span of each query request over HTTP ({@code POST /{app}/predict},
 * {@code POST /v2/models/.../infer}), continuing the client's {@code traceparent}; other routes
 * pass untraced. A request that fails says why on its span (the error's message, as the client
 * reads it in the body).
 */
public final class HttpRequestTracing implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");

    private final QueryTracing tracing;

    public HttpRequestTracing(QueryTracing tracing) {
        this.tracing = tracing;
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        String route = request.attribute(RouterFunctions.MATCHING_PATTERN_ATTRIBUTE).map(Object::toString)
                .orElse(null);
        if (route == null || !(route.endsWith("/predict") || route.endsWith("/infer"))) {
            return next.handle(request);
        }
        String method = request.method().name();
        RequestTrace trace = tracing.startRequest(method + " " + route,
                TraceHeaders.extract(request.headers().asHttpHeaders()),
                Attributes.of(METHOD, method, ROUTE, route, PATH, request.path()));
        return Mono.defer(() -> next.handle(request))
                .doOnSuccess(response -> trace.end(STATUS, response == null ? 0 : response.statusCode().value(),
                        response != null && response.statusCode().isError() ? response.statusCode().toString() : null))
                .doOnError(e -> trace.end(STATUS, status(e), e.getMessage() == null ? e.toString() : e.getMessage()))
                .doOnCancel(() -> trace.end(STATUS, 499, "the client went away"))
                .contextWrite(context -> context.put(RequestTrace.KEY, trace));
    }

    private static long status(Throwable e) {
        return e instanceof ApiException api ? api.status().value()
                : e instanceof OverloadRejectedException ? 503
                : e instanceof InputRejectedException || e instanceof IllegalArgumentException ? 400
                : e instanceof ResponseStatusException rse ? rse.getStatusCode().value() : 500;
    }
}
