package io.servegate.gateway.api;

import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.ReplicaStatus;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The admin calls that run replicas: {@code deploy_model}, {@code set_num_replicas} and
 * {@code get_deployments} through the {@link ContainerManager}, and {@code deploy_model} with a
 * {@code pool} and {@code get_placements} for pools of multi-model containers.
 */
public final class DeploymentHandler {

    /** How often a deploy that waits for its replicas looks at them. */
    private static final Duration SETTLE_POLL = Duration.ofMillis(100);

    private final Registry registry;
    private final ReplicaPool pool;
    private final JsonBodies bodies;
    private final AdminRequests requests;
    private final ContainerManager containers;

    public DeploymentHandler(Registry registry, ReplicaPool pool, JsonBodies bodies, AdminRequests requests,
            ContainerManager containers) {
        this.registry = registry;
        this.pool = pool;
        this.bodies = bodies;
        this.requests = requests;
        this.containers = containers;
    }

    /**
     * Adds the model version unless it exists (then its input type must match) and has the
     * container manager deploy it; a version this call added is deleted again if the deployment
     * is refused. A {@code command} for the {@code process} manager must pass the
     * {@link io.servegate.gateway.containers.ProcessCommandPolicy} first (else 403, nothing registered).
     */
    public Mono<ServerResponse> deployModel(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            if (body.hasNonNull("pool")) {
                return deployToPool(requests.poolDeploy(body));
            }
            AdminRequests.Deploy deploy = requests.deploy(body);
            Duration wait = Duration.ofSeconds(JsonBodies.optionalLong(body, "wait_ready_seconds", 0, 600, 0));
            return deploy(deploy).flatMap(d -> wait.isZero() ? ok(describe(d)) : settled(d, wait).flatMap(this::answer));
        });
    }

    /** The deployment once every replica is ready, or one says why it is not, or {@code wait} has passed. */
    private Mono<Deployment> settled(Deployment deployed, Duration wait) {
        Mono<Deployment> now = Mono.defer(containers::list).map(all -> all.stream()
                .filter(d -> d.modelName().equals(deployed.modelName()) && d.modelVersion().equals(deployed.modelVersion()))
                .findFirst().orElse(deployed));
        return Flux.interval(Duration.ZERO, SETTLE_POLL).concatMap(t -> now)
                .filter(d -> d.readyReplicas() >= d.desiredReplicas()
                        || d.replicas().stream().anyMatch(r -> r.detail() != null))
                .next()
                .timeout(wait, now);
    }

    /** 200 when every replica is ready; else 502 naming the first replica's reason, or 504 when none gave one. */
    private Mono<ServerResponse> answer(Deployment d) {
        if (d.readyReplicas() >= d.desiredReplicas()) {
            return ok(describe(d));
        }
        ReplicaStatus failed = d.replicas().stream().filter(r -> r.detail() != null).findFirst().orElse(null);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "deployment not ready");
        body.put("cause", (failed != null ? "replica " + failed.id() + ": " + failed.detail()
                : d.readyReplicas() + " of " + d.desiredReplicas() + " replicas ready within wait_ready_seconds")
                + "; the deployment stays, and the restart policy restarts its replicas");
        body.put("deployment", describe(d));
        return ServerResponse.status(failed != null ? HttpStatus.BAD_GATEWAY : HttpStatus.GATEWAY_TIMEOUT)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }

    private Mono<Deployment> deploy(AdminRequests.Deploy deploy) {
        ModelVersion model = deploy.model();
        return Mono.defer(() -> addUnlessPresent(model)).flatMap(wasAdded -> containers.deploy(deploy.spec())
                .onErrorResume(e -> wasAdded
                        ? registry.deleteVersionedModel(model.name(), model.version())
                                .onErrorResume(x -> Mono.empty()).then(Mono.error(e))
                        : Mono.error(e)));
    }

    /** Adds the model version unless it exists, when its input type must match; true when this call added it. */
    private Mono<Boolean> addUnlessPresent(ModelVersion model) {
        return registry.snapshot().model(model.name(), model.version())
                .map(existing -> {
                    requireSameInputType(existing, model);
                    return Mono.just(false);
                })
                .orElseGet(() -> registry.addModel(model).thenReturn(true));
    }

    private static void requireSameInputType(ModelVersion existing, ModelVersion model) {
        if (!existing.inputType().equals(model.inputType())) {
            throw ApiException.badRequest("model version '" + model.name() + ":" + model.version()
                    + "' exists with input type " + existing.inputType() + ", not " + model.inputType());
        }
    }

    /**
     * Places the model version on a pool of multi-model containers (see docs/many-models.md),
     * creating the pool from {@code addresses} and {@code memory_budget_bytes} on first use, and
     * adds the version unless it exists.
     */
    private Mono<ServerResponse> deployToPool(AdminRequests.PoolDeploy deploy) {
        ModelVersion model = deploy.model();
        registry.snapshot().model(model.name(), model.version())
                .ifPresent(existing -> requireSameInputType(existing, model));
        try {
            pool.shared().deploy(deploy.pool(), deploy.addresses(), deploy.memoryBudgetBytes(), deploy.placed());
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        } catch (IllegalStateException e) {
            throw new ApiException(HttpStatus.CONFLICT, "conflict", e.getMessage());
        }
        return addUnlessPresent(model).then(ok(Map.of("success", true, "pool", deploy.pool(),
                "model", model.name() + ":" + model.version())));
    }

    /** The pools of multi-model containers: each replica with the models it holds, and the models placed. */
    public Mono<ServerResponse> getPlacements(ServerRequest request) {
        return ok(pool.shared().placements().stream().map(AdminViews::placement).toList());
    }

    public Mono<ServerResponse> setNumReplicas(ServerRequest request) {
        return bodies.object(request).map(requests::setReplicas)
                .flatMap(r -> containers.setReplicas(r.modelName(), r.modelVersion(), r.replicas()))
                .flatMap(d -> ok(describe(d)));
    }

    public Mono<ServerResponse> getDeployments(ServerRequest request) {
        return containers.list().flatMap(ds -> ok(ds.stream().map(this::describe).toList()));
    }

    private Map<String, Object> describe(Deployment d) {
        return AdminViews.deployment(d, containers.kind(), registry.snapshot(), pool);
    }

    private static Mono<ServerResponse> ok(Object body) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}
