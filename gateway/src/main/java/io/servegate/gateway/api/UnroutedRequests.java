package io.servegate.gateway.api;

import io.servegate.gateway.registry.Names;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Answers the requests no route takes: 405 with an {@code Allow} header when the path is served
 * with other methods (found by asking the routes themselves, so there is no second list of them
 * to keep in step), else 404. Neither body repeats a request header.
 */
public final class UnroutedRequests implements HandlerFunction<ServerResponse> {

    private static final List<HttpMethod> METHODS = List.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST,
            HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.DELETE);

    private final RouterFunction<ServerResponse> routes;
    private final String what;
    private final Function<String, Errors.Shape> shapes;

    /**
     * @param what what the routes serve, for the 404's cause: {@code endpoint}, {@code admin endpoint}
     * @param shapes the shape of the error body by the request's path
     */
    public UnroutedRequests(RouterFunction<ServerResponse> routes, String what, Function<String, Errors.Shape> shapes) {
        this.routes = routes;
        this.what = what;
        this.shapes = shapes;
    }

    /** {@code routes}, then this for whatever they do not take. */
    public static RouterFunction<ServerResponse> after(RouterFunction<ServerResponse> routes, String what,
            Function<String, Errors.Shape> shapes) {
        return routes.and(RouterFunctions.route(request -> true, new UnroutedRequests(routes, what, shapes)));
    }

    @Override
    public Mono<ServerResponse> handle(ServerRequest request) {
        String shown = request.method() + " " + Names.brief(request.path(), 128);
        Errors.Shape shape = shapes.apply(request.path());
        return Flux.fromIterable(METHODS).filter(m -> !m.equals(request.method()))
                .concatMap(m -> routes.route(ServerRequest.from(request).method(m).build()).map(handler -> m))
                .collectList()
                .flatMap(allowed -> {
                    if (allowed.isEmpty()) {
                        return Errors.json(HttpStatus.NOT_FOUND, "not found", "no " + what + " " + shown, shape);
                    }
                    String allow = allowed.stream().map(HttpMethod::name).collect(Collectors.joining(", "));
                    return ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED).header(HttpHeaders.ALLOW, allow)
                            .contentType(MediaType.APPLICATION_JSON).bodyValue(Errors.body("method not allowed",
                                    shown + " is not served; allowed: " + allow, shape));
                });
    }
}
