package io.servegate.gateway.api;

import io.servegate.gateway.access.QueryKeys;
import io.servegate.core.cache.PredictionCache;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Clipper's admin API for apps, model versions, links and replicas, same paths and bodies, plus
 * {@code add_container} for replicas the gateway did not start ({@link DeploymentHandler} has the
 * calls that run replicas). Every call is a POST with a JSON object, except {@code GET /admin/ping};
 * bodies are read by {@link AdminRequests}, answers written by {@link AdminViews}.
 */
public final class AdminHandler {

    private final Registry registry;
    private final ReplicaPool pool;
    private final PredictionCache cache;
    private final JsonBodies bodies;
    private final AdminRequests requests;
    private final ContainerManager containers;
    private final QueryKeys keys;

    /**
     * @param containers stops a deleted version's managed replicas
     * @param keys       a deleted app's query keys go with it, so an app made later under its name has none
     */
    public AdminHandler(Registry registry, ReplicaPool pool, PredictionCache cache, JsonBodies bodies,
            AdminRequests requests, ContainerManager containers, QueryKeys keys) {
        this.registry = registry;
        this.pool = pool;
        this.cache = cache;
        this.bodies = bodies;
        this.requests = requests;
        this.containers = containers;
        this.keys = keys;
    }

    public Mono<ServerResponse> ping(ServerRequest request) {
        return ok(Map.of("status", "ok"));
    }

    public Mono<ServerResponse> addApp(ServerRequest request) {
        return write(request, body -> registry.addApp(requests.app(body)));
    }

    public Mono<ServerResponse> deleteApp(ServerRequest request) {
        return write(request, body -> {
            String name = JsonBodies.requiredString(body, "name");
            return registry.deleteApp(name).then(keys.removeAll(name));
        });
    }

    public Mono<ServerResponse> addModel(ServerRequest request) {
        return write(request, body -> registry.addModel(requests.modelVersion(body,
                JsonBodies.optionalString(body, "container_name", ""))));
    }

    public Mono<ServerResponse> setModelVersion(ServerRequest request) {
        return write(request, body -> registry.setModelVersion(JsonBodies.requiredString(body, "model_name"),
                JsonBodies.requiredString(body, "model_version")));
    }

    /** Stops the version's managed replicas first, then unregisters it and drops its cached predictions. */
    public Mono<ServerResponse> deleteVersionedModel(ServerRequest request) {
        return write(request, body -> {
            String name = JsonBodies.requiredString(body, "model_name");
            String version = JsonBodies.requiredString(body, "model_version");
            return containers.remove(name, version)
                    .then(registry.deleteVersionedModel(name, version))
                    .then(Mono.fromRunnable(() -> cache.invalidateModel(name, version)));
        });
    }

    public Mono<ServerResponse> addModelLinks(ServerRequest request) {
        return write(request, body -> registry.addModelLinks(JsonBodies.requiredString(body, "app_name"),
                JsonBodies.stringList(body, "model_names", true)));
    }

    public Mono<ServerResponse> deleteModelLinks(ServerRequest request) {
        return write(request, body -> registry.deleteModelLinks(JsonBodies.requiredString(body, "app_name"),
                JsonBodies.stringList(body, "model_names", true)));
    }

    public Mono<ServerResponse> addContainer(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            ContainerReplica replica = requests.container(body);
            return registry.addReplica(replica).then(ok(Map.of("success", true, "container_id", replica.id())));
        });
    }

    public Mono<ServerResponse> deleteContainer(ServerRequest request) {
        return write(request, body -> registry.removeReplica(JsonBodies.requiredString(body, "container_id")));
    }

    public Mono<ServerResponse> getAllApplications(ServerRequest request) {
        return read(request, (body, s) -> JsonBodies.optionalBoolean(body, "verbose")
                ? s.apps().stream().map(AdminViews::app).toList()
                : s.apps().stream().map(Application::name).toList());
    }

    public Mono<ServerResponse> getApplication(ServerRequest request) {
        return read(request, (body, s) -> AdminViews.app(QueryHandler.app(s, JsonBodies.requiredString(body, "name"))));
    }

    public Mono<ServerResponse> getLinkedModels(ServerRequest request) {
        return read(request, (body, s) -> QueryHandler.app(s, JsonBodies.requiredString(body, "app_name"))
                .linkedModels());
    }

    public Mono<ServerResponse> getAllModels(ServerRequest request) {
        return read(request, (body, s) -> JsonBodies.optionalBoolean(body, "verbose")
                ? s.models().stream().map(m -> AdminViews.model(m, s)).toList()
                : s.models().stream().map(m -> m.name() + ":" + m.version()).toList());
    }

    public Mono<ServerResponse> getModel(ServerRequest request) {
        return read(request, (body, s) -> {
            String name = JsonBodies.requiredString(body, "model_name");
            String version = JsonBodies.requiredString(body, "model_version");
            return AdminViews.model(s.model(name, version).orElseThrow(() ->
                    ApiException.notFound("unknown model '" + name + ":" + version + "'")), s);
        });
    }

    public Mono<ServerResponse> getAllContainers(ServerRequest request) {
        return read(request, (body, s) -> s.models().stream()
                .flatMap(m -> pool.status(m.name(), m.version()).stream())
                .map(AdminViews::replica).toList());
    }

    private Mono<ServerResponse> write(ServerRequest request, Function<JsonNode, Mono<Void>> action) {
        return bodies.object(request).flatMap(body -> action.apply(body)).then(ok(Map.of("success", true)));
    }

    /** A read call: its body may be empty; the answer comes from one registry snapshot. */
    private Mono<ServerResponse> read(ServerRequest request, BiFunction<JsonNode, RegistrySnapshot, Object> query) {
        return request.bodyToMono(String.class).defaultIfEmpty("{}")
                .map(bodies::parseObject)
                .flatMap(body -> ok(query.apply(body, registry.snapshot())));
    }

    private static Mono<ServerResponse> ok(Object body) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}
