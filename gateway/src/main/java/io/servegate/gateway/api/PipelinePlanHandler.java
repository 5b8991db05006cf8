package io.servegate.gateway.api;

import io.servegate.gateway.autoscaling.AutoscalingService;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelinePlanChange;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * {@code apply_pipeline_plan} {@code {pipeline, stages: {STAGE: {replicas, max_batch_size,
 * hardware?, deadline_micros}}}}: a planner's configuration made real. Each stage's model
 * (its current version) gets the replica count through the container manager, as
 * {@code set_num_replicas} does, and the maximum batch size its scheduler sends; each stage gets
 * its deadline, which makes the pipeline planned.
 *
 * <p>Everything is checked before anything changes: the pipeline (404), every model stage given
 * once with all four settings in range and no unknown field (400), stages sharing a model given
 * the same replicas and batch size (400), each model deployed by the container manager and not
 * autoscaled (409), and its version running on the stage's hardware kind (409 naming both: to
 * move a stage to another kind, deploy a version on that kind and make it current first). The
 * registry then writes the deadlines and batch sizes in one step, validating the deadlines
 * against the SLO; only then are replicas scaled.
 */
public final class PipelinePlanHandler {

    private static final List<String> STAGE_FIELDS = List.of("replicas", "max_batch_size", "hardware",
            "deadline_micros");

    private final Registry registry;
    private final ContainerManager containers;
    private final AutoscalingService autoscaling;
    private final ReplicaPool pool;
    private final JsonBodies bodies;
    private final int maxReplicas;

    public PipelinePlanHandler(Registry registry, ContainerManager containers, AutoscalingService autoscaling,
            ReplicaPool pool, JsonBodies bodies, int maxReplicas) {
        this.registry = registry;
        this.containers = containers;
        this.autoscaling = autoscaling;
        this.pool = pool;
        this.bodies = bodies;
        this.maxReplicas = maxReplicas;
    }

    /** One stage's settings, checked. */
    private record StagePlan(PipelineStage stage, ModelVersion model, int replicas, int maxBatchSize,
            long deadlineMicros) {
    }

    public Mono<ServerResponse> applyPipelinePlan(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            JsonBodies.onlyFields(body, "apply_pipeline_plan", List.of("pipeline", "stages"));
            String name = Names.requireValid("pipeline", JsonBodies.requiredString(body, "pipeline"));
            RegistrySnapshot s = registry.snapshot();
            PipelineGraph graph = s.pipeline(name)
                    .orElseThrow(() -> ApiException.notFound("unknown pipeline '" + name + "'"));
            List<StagePlan> plan = stages(graph, body.get("stages"), s);
            return containers.list().flatMap(deployments -> {
                Map<String, StagePlan> byModel = checkModels(plan, deployments);
                Map<String, Long> deadlines = new LinkedHashMap<>();
                plan.forEach(p -> deadlines.put(p.stage().name(), p.deadlineMicros()));
                List<PipelinePlanChange.BatchCap> caps = byModel.values().stream()
                        .map(p -> new PipelinePlanChange.BatchCap(p.model().name(), p.model().version(),
                                p.maxBatchSize()))
                        .toList();
                return registry.applyPipelinePlan(new PipelinePlanChange(name, deadlines, caps))
                        .then(Flux.fromIterable(byModel.values())
                                .concatMap(p -> containers.setReplicas(p.model().name(), p.model().version(),
                                        p.replicas()))
                                .then())
                        .then(Mono.defer(() -> bodies.respond(HttpStatus.OK, describe(name, plan))));
            });
        });
    }

    private List<StagePlan> stages(PipelineGraph graph, JsonNode stages, RegistrySnapshot s) {
        if (stages == null || !stages.isObject()) {
            throw ApiException.badRequest("'stages' must be an object of stage names to {replicas, max_batch_size, "
                    + "hardware, deadline_micros}");
        }
        for (String given : stages.propertyNames()) {
            if (graph.pipeline().stages().stream().noneMatch(st -> st.name().equals(given))) {
                throw ApiException.badRequest("pipeline '" + graph.pipeline().name() + "' has no stage '" + given + "'");
            }
        }
        List<StagePlan> out = new ArrayList<>();
        for (PipelineStage stage : graph.pipeline().stages()) {
            JsonNode st = stages.get(stage.name());
            if (stage.isCombine()) {
                if (st != null) {
                    throw ApiException.badRequest("stage '" + stage.name() + "' combines its inputs: it takes no plan");
                }
                continue;
            }
            if (st == null || !st.isObject()) {
                throw ApiException.badRequest("stage '" + stage.name() + "' is missing from 'stages': a plan gives "
                        + "every model stage replicas, max_batch_size and deadline_micros");
            }
            String at = "stages." + stage.name();
            JsonBodies.onlyFields(st, "'" + at + "'", STAGE_FIELDS);
            int replicas = (int) range(st, at, "replicas", 0, maxReplicas);
            int maxBatch = (int) range(st, at, "max_batch_size", 1, pool.gatewayMaxBatchSize());
            long deadline = range(st, at, "deadline_micros", 1, graph.pipeline().latencySloMicros());
            ModelVersion model = s.currentVersion(stage.model()).flatMap(v -> s.model(stage.model(), v))
                    .orElseThrow(() -> ApiException.notFound("stage '" + stage.name() + "': model '" + stage.model()
                            + "' has no version"));
            String hardware = JsonBodies.optionalString(st, "hardware", null);
            if (hardware != null && !Names.requireValid("hardware", hardware).equals(model.hardware())) {
                throw new ApiException(HttpStatus.CONFLICT, "conflict", "stage '" + stage.name() + "' is planned on "
                        + "hardware '" + hardware + "' but model version '" + model.name() + ":" + model.version()
                        + "' runs on '" + model.hardware() + "': deploy a version on '" + hardware
                        + "' (deploy_model with hardware) and make it current, then apply again");
            }
            out.add(new StagePlan(stage, model, replicas, maxBatch, deadline));
        }
        return out;
    }

    /** @return the plan per model, each deployed here, not autoscaled, and given one setting by all its stages */
    private Map<String, StagePlan> checkModels(List<StagePlan> plan, List<Deployment> deployments) {
        Map<String, StagePlan> byModel = new LinkedHashMap<>();
        for (StagePlan p : plan) {
            ModelVersion m = p.model();
            StagePlan other = byModel.putIfAbsent(m.name(), p);
            if (other != null && (other.replicas() != p.replicas() || other.maxBatchSize() != p.maxBatchSize())) {
                throw ApiException.badRequest("stages '" + other.stage().name() + "' and '" + p.stage().name()
                        + "' call model '" + m.name() + "', whose replicas and scheduler they share: give them the "
                        + "same replicas and max_batch_size");
            }
            if (deployments.stream().noneMatch(d -> d.modelName().equals(m.name())
                    && d.modelVersion().equals(m.version()))) {
                throw new ApiException(HttpStatus.CONFLICT, "conflict", "model version '" + m.name() + ":"
                        + m.version() + "' is not deployed by the " + containers.kind() + " container manager, "
                        + "which sets the replicas of a plan");
            }
            if (autoscaling.views().stream().anyMatch(v -> v.model().equals(m.name())
                    && v.version().equals(m.version()))) {
                throw new ApiException(HttpStatus.CONFLICT, "conflict", "model version '" + m.name() + ":"
                        + m.version() + "' is autoscaled: turn its autoscaling off (set_autoscaling enabled false) "
                        + "before applying a plan");
            }
        }
        return byModel;
    }

    private static long range(JsonNode st, String at, String field, long min, long max) {
        JsonNode n = st.get(field);
        if (n == null || n.isNull()) {
            throw ApiException.badRequest("missing field '" + at + "." + field + "'");
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < min || n.longValue() > max) {
            throw ApiException.badRequest("field '" + at + "." + field + "' must be an integer in " + min + ".."
                    + max + ", got " + n);
        }
        return n.longValue();
    }

    private static Map<String, Object> describe(String pipeline, List<StagePlan> plan) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("pipeline", pipeline);
        out.put("planned", true);
        Map<String, Object> stages = new LinkedHashMap<>();
        for (StagePlan p : plan) {
            Map<String, Object> st = new LinkedHashMap<>();
            st.put("model_name", p.model().name());
            st.put("model_version", p.model().version());
            st.put("hardware", p.model().hardware());
            st.put("replicas", p.replicas());
            st.put("max_batch_size", p.maxBatchSize());
            st.put("deadline_micros", p.deadlineMicros());
            stages.put(p.stage().name(), st);
        }
        out.put("stages", stages);
        return out;
    }
}
