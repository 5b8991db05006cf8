package io.servegate.gateway.api;

import io.servegate.gateway.fleet.Ownership;
import io.servegate.gateway.fleet.Route;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Debug information on a query's answer: a query ({@code POST /{app}/predict} or
 * {@code POST /v2/models/{model}[/versions/{version}]/infer}) sent with {@code Servegate-Debug: true}
 * is answered with {@code Servegate-Scheduled-By}, the gateway that schedules each model version the
 * query goes to, as this gateway's view of the fleet had it when the query arrived:
 * {@code model:version=member}, comma-separated, in link (or stage) order; {@code none} for a
 * version no live gateway owns. Clipper queries name the models' current versions.
 *
 * <p>The answer names internal addresses, so only a caller holding the admin or metrics token
 * ({@code Authorization: Bearer <token>}) gets it; without the request header, without a token, or
 * with no token configured at all, nothing is added and the query is answered as usual.
 */
public final class ScheduledByHeader implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    /** Request header asking for debug information; its value must be {@code true}. */
    public static final String DEBUG = "Servegate-Debug";
    /** Response header naming the scheduling gateways. */
    public static final String SCHEDULED_BY = "Servegate-Scheduled-By";

    private final Registry registry;
    private final Ownership ownership;
    private final List<BearerAuth> tokenHolders;

    /** @param tokenHolders the tokens that may ask for debug information (the admin and metrics ones) */
    public ScheduledByHeader(Registry registry, Ownership ownership, List<BearerAuth> tokenHolders) {
        this.registry = registry;
        this.ownership = ownership;
        this.tokenHolders = List.copyOf(tokenHolders);
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        if (!"true".equalsIgnoreCase(request.headers().firstHeader(DEBUG)) || !HttpMethod.POST.equals(request.method())
                || !(request.path().endsWith("/predict") || request.path().endsWith("/infer"))
                || !tokenHolder(request.headers().firstHeader(HttpHeaders.AUTHORIZATION))) {
            return next.handle(request);
        }
        String value = scheduledBy(request);
        if (value != null) {
            // set before the handler runs: the response it returns adds its own headers to these
            request.exchange().getResponse().getHeaders().set(SCHEDULED_BY, value);
        }
        return next.handle(request);
    }

    private boolean tokenHolder(String authorization) {
        return authorization != null && tokenHolders.stream().anyMatch(t -> t.accepts(authorization));
    }

    /** The header's value, or null when the path names no known app, pipeline or model. */
    private String scheduledBy(ServerRequest request) {
        Map<String, String> vars = request.attribute(RouterFunctions.URI_TEMPLATE_VARIABLES_ATTRIBUTE)
                .map(v -> {
                    @SuppressWarnings("unchecked")
                    Map<String, String> m = (Map<String, String>) v;
                    return m;
                }).orElse(Map.of());
        RegistrySnapshot snapshot = registry.snapshot();
        List<String[]> versions = new ArrayList<>();
        if (vars.containsKey("app")) {
            for (String model : models(snapshot, vars.get("app"))) {
                snapshot.currentVersion(model).ifPresent(v -> versions.add(new String[] {model, v}));
            }
        } else if (vars.containsKey("model")) {
            String model = vars.get("model");
            String version = vars.containsKey("version") ? vars.get("version")
                    : snapshot.currentVersion(model).orElse(null);
            if (version != null) {
                versions.add(new String[] {model, version});
            }
        }
        if (versions.isEmpty()) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (String[] mv : versions) {
            parts.add(Ownership.key(mv[0], mv[1]) + "=" + member(ownership.route(mv[0], mv[1])));
        }
        return String.join(", ", parts);
    }

    /** The models an app links, or a pipeline's stages use, without repeats. */
    private static Set<String> models(RegistrySnapshot snapshot, String name) {
        Set<String> models = new LinkedHashSet<>();
        PipelineGraph pipeline = snapshot.pipeline(name).orElse(null);
        if (pipeline != null) {
            for (PipelineStage s : pipeline.order()) {
                if (!s.isCombine()) {
                    models.add(s.model());
                }
            }
        } else {
            snapshot.app(name).map(Application::linkedModels).ifPresent(models::addAll);
        }
        return models;
    }

    private String member(Route route) {
        if (route instanceof Route.Remote r) {
            return r.member();
        }
        return route instanceof Route.Local ? ownership.self() : "none";
    }
}
