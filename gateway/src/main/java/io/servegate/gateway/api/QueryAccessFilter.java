package io.servegate.gateway.api;

import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.access.QueryAccess;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Query keys and quotas on the query port's routes that reach an app ({@code /{app}/predict},
 * {@code /{app}/update}) or a model ({@code /v2/models/{model}/...}), checked before the body is
 * read. A keyed app's query without a valid key gets 401 naming nothing but the need for a key;
 * one over quota gets the app's overload response: {@code reject} (and every route but predict,
 * which alone has a default) 429 with {@code Retry-After}, {@code default} the default output.
 */
public final class QueryAccessFilter implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    static final String REALM = "servegate-query";
    /** The request attribute holding the {@link Tenant} a query let through is scheduled as (OIP: its key's app's). */
    static final String TENANT = QueryAccessFilter.class.getName() + ".tenant";

    private final Registry registry;
    private final QueryAccess access;

    public QueryAccessFilter(Registry registry, QueryAccess access) {
        this.registry = registry;
        this.access = access;
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        Map<String, String> vars = request.pathVariables();
        String authorization = request.headers().firstHeader(HttpHeaders.AUTHORIZATION);
        Mono<QueryAccess.Verdict> verdict;
        String app = vars.get("app");
        if (app != null) {
            RegistrySnapshot snapshot = registry.snapshot();
            // decided at once for nearly every query: nothing to subscribe to on the query path
            QueryAccess.Verdict now = access.appNow(snapshot, app, authorization);
            if (now != null) {
                return act(now, request, next);
            }
            verdict = access.app(snapshot, app, authorization);
        } else if (vars.containsKey("model")) {
            verdict = access.model(registry.snapshot(), vars.get("model"), authorization);
        } else {
            return next.handle(request);
        }
        // keys never read and the store unreachable: neither open nor refused, but unavailable
        return verdict.onErrorMap(e -> !(e instanceof ApiException), e -> new ApiException(
                HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "the query key store cannot be reached; retry shortly"))
                .flatMap(v -> act(v, request, next));
    }

    private static Mono<ServerResponse> act(QueryAccess.Verdict v, ServerRequest request,
            HandlerFunction<ServerResponse> next) {
        return switch (v.outcome()) {
            case PASS -> {
                if (v.app() != null) {
                    request.attributes().put(TENANT, v.tenant());
                }
                yield next.handle(request);
            }
            case UNAUTHORIZED -> unauthorized(v.problem());
            case LIMITED -> limited(v, request.pathVariables().containsKey("app")
                    && request.path().endsWith("/predict"));
        };
    }

    private static Mono<ServerResponse> unauthorized(String problem) {
        String challenge = "missing".equals(problem) ? "Bearer realm=\"" + REALM + "\""
                : "Bearer realm=\"" + REALM + "\", error=\"invalid_token\"";
        return ServerResponse.status(HttpStatus.UNAUTHORIZED).contentType(MediaType.APPLICATION_JSON)
                .header(HttpHeaders.WWW_AUTHENTICATE, challenge)
                .bodyValue(Map.of("error", "unauthorized", "cause", cause(problem)));
    }

    /** Why a key was refused, naming nothing of the app or its models. */
    static String cause(String problem) {
        return switch (problem) {
            case "missing" -> "this endpoint needs a query key: 'Authorization: Bearer <key>'";
            case "malformed" -> "the Authorization header must be 'Bearer <key>'";
            default -> "the query key is not valid here";
        };
    }

    private static Mono<ServerResponse> limited(QueryAccess.Verdict v, boolean predict) {
        Application app = v.app();
        if (predict && app != null && app.overloadResponse() == Application.OverloadResponse.DEFAULT) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("output", app.defaultOutput());
            body.put("default", true);
            body.put("default_explanation", "the app's rate limit is exceeded");
            return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
        }
        long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(v.retryAfterNanos() + 999_999_999L));
        return Errors.retryLater(HttpStatus.TOO_MANY_REQUESTS, seconds, "rate limit exceeded",
                "over the query quota; retry after " + seconds + " s", Errors.Shape.CLIPPER);
    }
}
