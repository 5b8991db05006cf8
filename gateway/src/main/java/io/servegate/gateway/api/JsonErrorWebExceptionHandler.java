package io.servegate.gateway.api;

import java.util.List;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.result.view.ViewResolver;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Errors outside the routes' own handling (no such path, wrong method, a body over the limit
 * before a handler runs) get the same {@code {"error", "cause"}} body as everything else.
 */
public final class JsonErrorWebExceptionHandler implements WebExceptionHandler {

    private final ServerResponse.Context context;

    public JsonErrorWebExceptionHandler(List<HttpMessageWriter<?>> writers) {
        this.context = new ServerResponse.Context() {
            @Override
            public List<HttpMessageWriter<?>> messageWriters() {
                return writers;
            }

            @Override
            public List<ViewResolver> viewResolvers() {
                return List.of();
            }
        };
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        if (exchange.getResponse().isCommitted()) {
            return Mono.error(ex);
        }
        return Errors.toResponse(ex).flatMap(response -> response.writeTo(exchange, context));
    }
}
