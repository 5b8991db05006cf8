package io.servegate.gateway.api;

import io.servegate.gateway.registry.ModelProfile;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.dispatch.ReplicaProfiler;
import io.servegate.oip.client.ContainerProfiler;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The profiler's admin API. {@code profile_model} {@code {model_name, model_version?, hardware?,
 * max_batch?, samples?, warmup?, input_length?, timeout_ms?}} measures one replica of the model
 * version (default: the current one) and answers the profile it stored in the registry;
 * {@code get_profiles} {@code {model_name?}} lists the stored profiles. The measurement runs on
 * gRPC's threads, never on the event loop, and one at a time per model.
 */
public final class ProfileHandler {

    private static final List<String> PROFILE_FIELDS = List.of("model_name", "model_version", "hardware", "max_batch",
            "samples", "warmup", "input_length", "timeout_ms");

    private final Registry registry;
    private final ReplicaPool pool;
    private final ReplicaProfiler profiler;
    private final JsonBodies bodies;

    public ProfileHandler(Registry registry, ReplicaPool pool, ReplicaProfiler profiler, JsonBodies bodies) {
        this.registry = registry;
        this.pool = pool;
        this.profiler = profiler;
        this.bodies = bodies;
    }

    public Mono<ServerResponse> profileModel(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            JsonBodies.onlyFields(body, "profile_model", PROFILE_FIELDS);
            ModelVersion model = model(registry.snapshot(), body);
            String hardware = JsonBodies.optionalString(body, "hardware", null);
            if (hardware != null) {
                Names.requireValid("hardware", hardware);
                if (!hardware.equals(model.hardware())) {
                    throw new ApiException(HttpStatus.CONFLICT, "conflict", "model version '" + model.name() + ":"
                            + model.version() + "' runs on hardware '" + model.hardware() + "', not '" + hardware
                            + "': deploy a version on '" + hardware + "' to profile that kind");
                }
            }
            int maxBatch = (int) JsonBodies.optionalLong(body, "max_batch", 1, pool.gatewayMaxBatchSize(),
                    Math.min(64, pool.gatewayMaxBatchSize()));
            int samples = (int) JsonBodies.optionalLong(body, "samples", 1, 1000, 20);
            int warmup = (int) JsonBodies.optionalLong(body, "warmup", 0, 1000, 5);
            int declared = pool.declaredInput(model.name(), model.version()).rowLength();
            int inputLength = (int) JsonBodies.optionalLong(body, "input_length", 1, 1_000_000,
                    declared > 0 ? declared : 1);
            long timeoutMs = JsonBodies.optionalLong(body, "timeout_ms", 1, 600_000, 10_000);
            ContainerProfiler settings = new ContainerProfiler(maxBatch, samples, warmup, Duration.ofMillis(timeoutMs));
            return profiler.profile(model, settings, inputLength)
                    .onErrorMap(ReplicaProfiler.Busy.class,
                            e -> new ApiException(HttpStatus.CONFLICT, "conflict", e.getMessage()))
                    // a batch the replica failed or answered wrongly: the replica's fault, not the request's
                    .onErrorMap(e -> e instanceof io.grpc.StatusRuntimeException
                                    || e instanceof io.servegate.oip.client.TensorFormatException,
                            e -> new ApiException(HttpStatus.BAD_GATEWAY, "replica error", "profiling model version '"
                                    + model.name() + ":" + model.version() + "' failed: " + e.getMessage()))
                    .flatMap(p -> bodies.respond(HttpStatus.OK, describe(p)));
        });
    }

    public Mono<ServerResponse> getProfiles(ServerRequest request) {
        return request.bodyToMono(String.class).defaultIfEmpty("{}").map(bodies::parseObject).flatMap(body -> {
            JsonBodies.onlyFields(body, "get_profiles", List.of("model_name"));
            String name = JsonBodies.optionalString(body, "model_name", null);
            RegistrySnapshot s = registry.snapshot();
            if (name != null && s.versions(name).isEmpty()) {
                throw ApiException.notFound("unknown model '" + name + "'");
            }
            List<ModelProfile> profiles = name == null ? s.profiles() : s.profiles(name);
            return bodies.respond(HttpStatus.OK, profiles.stream().map(ProfileHandler::describe).toList());
        });
    }

    /** The version named by {@code model_name} and {@code model_version} (default: the current one); 404 if none. */
    static ModelVersion model(RegistrySnapshot s, JsonNode body) {
        String name = JsonBodies.requiredString(body, "model_name");
        String version = JsonBodies.optionalString(body, "model_version", null);
        String v = version != null ? version : s.currentVersion(name)
                .orElseThrow(() -> ApiException.notFound("unknown model '" + name + "'"));
        return s.model(name, v).orElseThrow(() -> ApiException.notFound("unknown model '" + name + ":" + v + "'"));
    }

    static Map<String, Object> describe(ModelProfile p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_name", p.modelName());
        m.put("model_version", p.modelVersion());
        m.put("hardware", p.hardware());
        m.put("replica_id", p.replicaId());
        m.put("address", p.address());
        m.put("measured_at", p.measuredAt().toString());
        m.put("samples", p.samples());
        m.put("round_trip", p.roundTrip());
        m.put("batches", p.batches().stream().map(b -> {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("batch_size", b.batchSize());
            row.put("mean_ms", b.meanMs());
            row.put("p99_ms", b.p99Ms());
            return row;
        }).toList());
        return m;
    }
}
