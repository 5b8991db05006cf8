package io.servegate.gateway.api;

import io.servegate.gateway.registry.Names;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    /** @param what what the routes serve, for the 404's cause: {@code endpoint}, {@code admin endpoint} */
    public UnroutedRequests(RouterFunction<ServerResponse> routes, String what) {
        this.routes = routes;
        this.what = what;
    }

    /** {@code routes}, then this for whatever they do not take. */
    public static RouterFunction<ServerResponse> after(RouterFunction<ServerResponse> routes, String what) {
        return routes.and(RouterFunctions.route(request -> true, new UnroutedRequests(routes, what)));
    }

    @Override
    public Mono<ServerResponse> handle(ServerRequest request) {
        String shown = request.method() + " " + Names.brief(request.path(), 128);
        return Flux.fromIterable(METHODS).filter(m -> !m.equals(request.method()))
                .concatMap(m -> routes.route(ServerRequest.from(request).method(m).build()).map(handler -> m))
                .collectList()
                .flatMap(allowed -> {
                    if (allowed.isEmpty()) {
                        return Errors.json(HttpStatus.NOT_FOUND, "not found", "no " + what + " " + shown);
                    }
                    String allow = allowed.stream().map(HttpMethod::name).collect(Collectors.joining(", "));
                    Map<String, Object> body = new LinkedHashMap<>();
                    body.put("error", "method not allowed");
                    body.put("cause", shown + " is not served; allowed: " + allow);
                    return ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED).header(HttpHeaders.ALLOW, allow)
                            .contentType(MediaType.APPLICATION_JSON).bodyValue(body);
                });
    }
}
