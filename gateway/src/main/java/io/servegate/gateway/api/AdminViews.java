package io.servegate.gateway.api;

import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.ReplicaStatus;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.RateLimit;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.dispatch.SharedPools;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The admin API's answers: apps, model versions, replicas, deployments and pools as Clipper's JSON objects. */
final class AdminViews {

    private AdminViews() {
    }

    static Map<String, Object> app(Application a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", a.name());
        m.put("input_type", a.inputType());
        m.put("default_output", a.defaultOutput());
        m.put("latency_slo_micros", a.latencySloMicros());
        m.put("linked_models", a.linkedModels());
        m.put("selection_policy", a.selection().policy());
        m.put("selection_params", a.selection().params());
        m.put("confidence_threshold", a.selection().confidenceThreshold());
        m.put("overload_response", a.overloadResponse().wireName());
        m.put("rate_limit", rateLimit(a.rateLimit()));
        m.put("priority", a.priority().wireName());
        m.put("weight", a.weight());
        return m;
    }

    /** A quota as the admin API shows it; null for none. */
    static Map<String, Object> rateLimit(RateLimit r) {
        return r == null ? null : Map.of("per_second", r.perSecond(), "burst", r.burst());
    }

    static Map<String, Object> model(ModelVersion v, RegistrySnapshot s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_name", v.name());
        m.put("model_version", v.version());
        m.put("is_current_version", s.currentVersion(v.name()).map(v.version()::equals).orElse(false));
        m.put("labels", v.labels());
        m.put("input_type", v.inputType());
        m.put("container_name", v.containerName());
        m.put("model_data_path", v.modelDataPath());
        m.put("batch_size", v.batchSize());
        m.put("scheduler", v.scheduler() == null ? null : v.scheduler().id());
        m.put("hardware", v.hardware());
        m.put("max_batch_size", v.maxBatchSize() > 0 ? v.maxBatchSize() : null);
        return m;
    }

    /** A replica as the replica pool sees it: availability, queue, batch cap, circuit, idleness. */
    static Map<String, Object> replica(ReplicaPool.ReplicaStatus r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("container_id", r.replica().id());
        m.put("model_name", r.replica().modelName());
        m.put("model_version", r.replica().modelVersion());
        m.put("address", r.replica().address());
        m.put("available", r.available());
        m.put("queue_length", r.queueLength());
        m.put("max_batch_size", r.maxBatchSize());
        m.put("circuit", r.circuit());
        m.put("idle_fraction", Double.isNaN(r.idleFraction()) ? null : r.idleFraction());
        return m;
    }

    /**
     * A deployment of the container manager {@code manager}, with the version's hardware and the
     * batch cap its scheduler applies (or would) where the version is registered.
     */
    static Map<String, Object> deployment(Deployment d, String manager, RegistrySnapshot s, ReplicaPool pool) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_name", d.modelName());
        m.put("model_version", d.modelVersion());
        m.put("manager", manager);
        m.put("num_replicas", d.desiredReplicas());
        m.put("ready_replicas", d.readyReplicas());
        s.model(d.modelName(), d.modelVersion()).ifPresent(v -> {
            m.put("hardware", v.hardware());
            // the scheduler's own cap once it runs, so that what it applies is what shows
            int applied = pool.maxBatchSize(v.name(), v.version());
            m.put("max_batch_size", applied > 0 ? applied : pool.maxBatchSize(v));
        });
        m.put("replicas", d.replicas().stream().map(AdminViews::managed).toList());
        return m;
    }

    private static Map<String, Object> managed(ReplicaStatus r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("container_id", r.id());
        m.put("address", r.address());
        m.put("state", r.state().name().toLowerCase(Locale.ROOT));
        m.put("restarts", r.restarts());
        if (r.detail() != null) {
            m.put("detail", r.detail());
        }
        return m;
    }

    /** A pool of multi-model containers: each replica with the models it holds, and the models placed. */
    static Map<String, Object> placement(SharedPools.Placement p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pool", p.pool());
        m.put("models", p.models());
        m.put("arrivals", p.arrivals());
        m.put("cold_starts", p.coldStarts());
        m.put("loads", p.loads());
        m.put("evictions", p.evictions());
        m.put("replicas", p.replicas().stream().map(r -> {
            Map<String, Object> rm = new LinkedHashMap<>();
            rm.put("container_id", r.id());
            rm.put("address", r.address());
            rm.put("available", r.available());
            rm.put("memory_budget_bytes", r.budgetBytes());
            rm.put("used_bytes", r.usedBytes());
            rm.put("loaded", r.loaded());
            return rm;
        }).toList());
        return m;
    }
}
