package io.servegate.gateway.api;

import java.util.List;
import java.util.function.Function;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.result.view.ViewResolver;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Errors outside the routes' own handling (no such path, wrong method, a body over the limit
 * before a handler runs) get the same JSON body as everything else on their path ({@link Errors.Shape}).
 */
public final class JsonErrorWebExceptionHandler implements WebExceptionHandler {

    private final ServerResponse.Context context;
    private final Function<String, Errors.Shape> shapes;

    /** @param shapes the shape of an error body by its request's path ({@link Errors.Shape#forPath} on the query port) */
    public JsonErrorWebExceptionHandler(List<HttpMessageWriter<?>> writers, Function<String, Errors.Shape> shapes) {
        this.shapes = shapes;
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
        return Errors.toResponse(ex, shapes.apply(exchange.getRequest().getPath().value())).flatMap(response -> response.writeTo(exchange, context));
    }
}
