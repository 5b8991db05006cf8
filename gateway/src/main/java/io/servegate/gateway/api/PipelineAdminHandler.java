package io.servegate.gateway.api;

import io.servegate.gateway.access.QueryKeys;
import io.servegate.gateway.query.PipelineService;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.Pipeline;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineJson;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * The admin API of pipeline apps: {@code add_pipeline} (the body is {@link PipelineJson}'s),
 * {@code delete_pipeline} {@code {name}}, {@code get_pipeline} {@code {name}} (the pipeline and
 * each stage's deadline as the gateway would set it now) and {@code get_all_pipelines}
 * {@code {verbose?}}. A graph the registry refuses gets a 4xx naming the problem.
 */
public final class PipelineAdminHandler {

    private final QueryKeys keys;
    private final Registry registry;
    private final PipelineService pipelines;
    private final JsonBodies bodies;

    /** @param keys a deleted pipeline's query keys go with it */
    public PipelineAdminHandler(Registry registry, PipelineService pipelines, JsonBodies bodies, QueryKeys keys) {
        this.registry = registry;
        this.pipelines = pipelines;
        this.bodies = bodies;
        this.keys = keys;
    }

    public Mono<ServerResponse> addPipeline(ServerRequest request) {
        return bodies.object(request)
                .flatMap(body -> registry.addPipeline(PipelineJson.read(body)))
                .then(Mono.defer(() -> ok(Map.of("success", true))));
    }

    public Mono<ServerResponse> deletePipeline(ServerRequest request) {
        return bodies.object(request)
                .flatMap(body -> {
                    String name = Names.requireValid("pipeline", JsonBodies.requiredString(body, "name"));
                    return registry.deletePipeline(name).then(keys.removeAll(name));
                })
                .then(Mono.defer(() -> ok(Map.of("success", true))));
    }

    public Mono<ServerResponse> getPipeline(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String name = JsonBodies.requiredString(body, "name");
            RegistrySnapshot s = registry.snapshot();
            PipelineGraph graph = s.pipeline(name)
                    .orElseThrow(() -> ApiException.notFound("unknown pipeline '" + name + "'"));
            return ok(describe(graph, s));
        });
    }

    public Mono<ServerResponse> getAllPipelines(ServerRequest request) {
        return request.bodyToMono(String.class).defaultIfEmpty("{}").map(bodies::parseObject).flatMap(body -> {
            RegistrySnapshot s = registry.snapshot();
            List<?> out = JsonBodies.optionalBoolean(body, "verbose")
                    ? s.pipelines().stream().map(p -> describe(s.pipeline(p.name()).orElseThrow(), s)).toList()
                    : s.pipelines().stream().map(Pipeline::name).toList();
            return ok(out);
        });
    }

    /** The pipeline's JSON with {@code stage_deadlines_micros}: each stage's deadline offset from arrival now. */
    private ObjectNode describe(PipelineGraph graph, RegistrySnapshot s) {
        ObjectNode n = PipelineJson.write(graph.pipeline());
        long[] due = pipelines.deadlines(graph, s);
        ObjectNode deadlines = n.putObject("stage_deadlines_micros");
        for (PipelineStage stage : graph.order()) {
            deadlines.put(stage.name(), TimeUnit.NANOSECONDS.toMicros(due[graph.position(stage.name())]));
        }
        n.put("planned", graph.planned());
        return n;
    }

    private Mono<ServerResponse> ok(Object body) {
        return bodies.respond(HttpStatus.OK, body);
    }
}
