package io.servegate.gateway.api;

import io.servegate.core.autoscaling.ArrivalEnvelope;
import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.AutoscalingPolicy;
import io.servegate.gateway.autoscaling.AutoscalingService;
import io.servegate.gateway.autoscaling.AutoscalingView;
import io.servegate.gateway.query.PipelineService;
import io.servegate.gateway.query.StageDeadlines;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.dispatch.ModelSignals;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The admin API's autoscaling calls: {@code set_autoscaling} turns a model version's autoscaler
 * on (with its bounds, policy and thresholds), replaces it, or with {@code "enabled": false} turns
 * it off; {@code get_autoscaling} reports each autoscaler's state and last decisions, and every
 * model version's load signals (arrival rate, traffic envelope, bad and idle counts, queue).
 * {@code set_pipeline_tuning} sets (or clears) the autoscaler of every model stage of a pipeline,
 * each planning for its stage's budget rather than its model's SLO.
 */
public final class AutoscalingHandler {

    private final Registry registry;
    private final ReplicaPool pool;
    private final AutoscalingService autoscaling;
    private final PipelineService pipelines;
    private final JsonBodies bodies;
    private final int maxReplicas;

    public AutoscalingHandler(Registry registry, ReplicaPool pool, AutoscalingService autoscaling,
            PipelineService pipelines, JsonBodies bodies, int maxReplicas) {
        this.registry = registry;
        this.pool = pool;
        this.autoscaling = autoscaling;
        this.pipelines = pipelines;
        this.bodies = bodies;
        this.maxReplicas = maxReplicas;
    }

    public Mono<ServerResponse> set(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            ModelVersion m = model(body);
            JsonNode enabled = body.get("enabled");
            if (enabled != null && !enabled.isNull() && !enabled.isBoolean()) {
                throw ApiException.badRequest("field 'enabled' must be true or false");
            }
            if (enabled != null && enabled.isBoolean() && !enabled.booleanValue()) {
                boolean had = autoscaling.clear(m.name(), m.version());
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("model_name", m.name());
                out.put("model_version", m.version());
                out.put("enabled", false);
                out.put("was_enabled", had);
                return ok(out);
            }
            return autoscaling.set(m.name(), m.version(), config(body))
                    .flatMap(view -> ok(describe(view, pool.signals(m.name(), m.version()))));
        });
    }

    /**
     * {@code set_pipeline_tuning} {@code {name, enabled?, min_replicas, max_replicas, ...}}: the
     * autoscaler of each model stage's current version, with {@code set_autoscaling}'s settings
     * and the stage's budget as its SLO (the plan's {@code deadline_micros}, or its share of the
     * end-to-end SLO as the split gives it now; a model behind two stages plans for the smaller).
     * Every stage's version must be deployed by the container manager, else none is set.
     */
    public Mono<ServerResponse> setPipelineTuning(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String name = JsonBodies.requiredString(body, "name");
            RegistrySnapshot snapshot = registry.snapshot();
            PipelineGraph graph = snapshot.pipeline(name)
                    .orElseThrow(() -> ApiException.notFound("unknown pipeline '" + name + "'"));
            JsonNode enabled = body.get("enabled");
            if (enabled != null && !enabled.isNull() && !enabled.isBoolean()) {
                throw ApiException.badRequest("field 'enabled' must be true or false");
            }
            boolean on = enabled == null || enabled.isNull() || enabled.booleanValue();
            long[] budgets = StageDeadlines.budgets(graph, pipelines.deadlines(graph, snapshot));
            // per model version, the tightest budget of the stages it serves
            Map<ModelVersion, Long> budgetByVersion = new LinkedHashMap<>();
            Map<String, ModelVersion> versionByStage = new LinkedHashMap<>();
            for (PipelineStage stage : graph.order()) {
                if (stage.isCombine()) {
                    continue;
                }
                String v = snapshot.currentVersion(stage.model()).orElseThrow(() -> ApiException.notFound(
                        "stage '" + stage.name() + "': model '" + stage.model() + "' has no version"));
                ModelVersion m = snapshot.model(stage.model(), v).orElseThrow(() -> ApiException.notFound(
                        "stage '" + stage.name() + "': unknown model '" + stage.model() + ":" + v + "'"));
                versionByStage.put(stage.name(), m);
                budgetByVersion.merge(m, budgets[graph.position(stage.name())], Math::min);
            }
            if (!on) {
                List<Object> stages = new ArrayList<>();
                versionByStage.forEach((stage, m) -> stages.add(Map.of("stage", stage, "model_name", m.name(),
                        "model_version", m.version(), "was_enabled", autoscaling.clear(m.name(), m.version()))));
                return ok(Map.of("name", name, "enabled", false, "stages", stages));
            }
            AutoscalerConfig config = config(body);
            List<AutoscalingService.Target> targets = new ArrayList<>();
            for (Map.Entry<ModelVersion, Long> e : budgetByVersion.entrySet()) {
                if (e.getValue() <= 0) {
                    throw ApiException.badRequest("model '" + e.getKey().name() + "' has no time left in pipeline '"
                            + name + "' to plan for");
                }
                targets.add(new AutoscalingService.Target(e.getKey().name(), e.getKey().version(),
                        config.withSlo(e.getValue())));
            }
            return autoscaling.setAll(targets).flatMap(views -> {
                Map<ModelVersion, AutoscalingView> byVersion = new LinkedHashMap<>();
                int i = 0;
                for (ModelVersion m : budgetByVersion.keySet()) {
                    byVersion.put(m, views.get(i++));
                }
                List<Object> stages = new ArrayList<>();
                versionByStage.forEach((stage, m) -> {
                    AutoscalingView view = byVersion.get(m);
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("stage", stage);
                    row.put("budget_micros", TimeUnit.NANOSECONDS.toMicros(budgets[graph.position(stage)]));
                    row.put("autoscaler", describe(view, null));
                    stages.add(row);
                });
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("name", name);
                out.put("enabled", true);
                out.put("planned", graph.planned());
                out.put("stages", stages);
                return ok(out);
            });
        });
    }

    public Mono<ServerResponse> get(ServerRequest request) {
        return request.bodyToMono(String.class).defaultIfEmpty("{}").map(bodies::parseObject).flatMap(body -> {
            List<Object> out = new ArrayList<>();
            if (body.has("model_name")) {
                ModelVersion m = model(body);
                AutoscalingView view = autoscaling.views().stream()
                        .filter(v -> v.model().equals(m.name()) && v.version().equals(m.version()))
                        .findFirst().orElse(null);
                Map<String, Object> one = view == null ? new LinkedHashMap<>() : describe(view, null);
                if (view == null) {
                    one.put("model_name", m.name());
                    one.put("model_version", m.version());
                    one.put("enabled", false);
                }
                one.put("signals", signals(pool.signals(m.name(), m.version())));
                out.add(one);
            } else {
                for (AutoscalingView v : autoscaling.views()) {
                    out.add(describe(v, pool.signals(v.model(), v.version())));
                }
            }
            return ok(out);
        });
    }

    /** The model version named by {@code model_name} and {@code model_version} (default: the current one). */
    private ModelVersion model(JsonNode body) {
        String name = JsonBodies.requiredString(body, "model_name");
        String version = JsonBodies.optionalString(body, "model_version", null);
        var snapshot = registry.snapshot();
        String v = version != null ? version : snapshot.currentVersion(name).orElseThrow(() ->
                ApiException.notFound("unknown model '" + name + "'"));
        return snapshot.model(name, v).orElseThrow(() ->
                ApiException.notFound("unknown model '" + name + ":" + v + "'"));
    }

    private AutoscalerConfig config(JsonNode body) {
        AutoscalerConfig defaults = AutoscalerConfig.of(1, 1);
        long min = JsonBodies.requiredLong(body, "min_replicas");
        long max = JsonBodies.requiredLong(body, "max_replicas");
        if (max > maxReplicas) {
            throw ApiException.badRequest("'max_replicas' must be at most " + maxReplicas
                    + " (servegate.containers.max-replicas), got " + max);
        }
        AutoscalingPolicy policy;
        try {
            policy = AutoscalingPolicy.of(JsonBodies.optionalString(body, "policy", defaults.policy().id()));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
        try {
            return new AutoscalerConfig((int) Math.max(Integer.MIN_VALUE, min), (int) max, policy,
                    number(body, "utilisation", defaults.utilisation()),
                    number(body, "bad_rate_threshold", defaults.badRateThreshold()),
                    number(body, "idle_threshold", defaults.idleThreshold()),
                    Math.round(number(body, "cooldown_s", defaults.cooldownNanos() / 1e9) * 1e9),
                    Math.round(number(body, "settle_s", defaults.settleNanos() / 1e9) * 1e9), 0);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
    }

    private static double number(JsonNode body, String field, double fallback) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return fallback;
        }
        double value = n.isNumber() ? JsonBodies.toDouble(n) : Double.NaN;
        if (!Double.isFinite(value)) {
            throw ApiException.badRequest("field '" + field + "' must be a finite number");
        }
        return value;
    }

    private static Map<String, Object> describe(AutoscalingView v, ModelSignals signals) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("model_name", v.model());
        out.put("model_version", v.version());
        out.put("enabled", true);
        AutoscalerConfig c = v.config();
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("min_replicas", c.minReplicas());
        config.put("max_replicas", c.maxReplicas());
        config.put("policy", c.policy().id());
        config.put("utilisation", c.utilisation());
        config.put("bad_rate_threshold", c.badRateThreshold());
        config.put("idle_threshold", c.idleThreshold());
        config.put("cooldown_s", c.cooldownNanos() / 1e9);
        config.put("settle_s", c.settleNanos() / 1e9);
        // the SLO the capacity model plans for: a pipeline stage's budget, or the model's own (null)
        config.put("slo_micros", c.sloNanos() > 0 ? TimeUnit.NANOSECONDS.toMicros(c.sloNanos()) : null);
        out.put("config", config);
        out.put("replicas", v.replicas());
        out.put("last_bad_rate", v.lastBadRate());
        out.put("acting", v.acting());
        out.put("retrying_to", v.retryingTo());
        out.put("failures_in_a_row", v.failuresInARow());
        out.put("last_error", v.lastError());
        List<Map<String, Object>> decisions = new ArrayList<>();
        for (AutoscalingView.Entry e : v.decisions()) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("at", java.time.Instant.ofEpochMilli(e.atEpochMillis()).toString());
            d.put("from", e.decision().from());
            d.put("to", e.decision().to());
            d.put("reason", e.decision().reason().id());
            d.put("detail", e.decision().detail());
            d.put("outcome", e.outcome());
            decisions.add(d);
        }
        out.put("decisions", decisions);
        if (signals != null) {
            out.put("signals", signals(signals));
        }
        return out;
    }

    private static Map<String, Object> signals(ModelSignals s) {
        if (s == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("arrival_rate", s.arrivalRate());
        Map<String, Object> envelope = new LinkedHashMap<>();
        for (int i = 0; i < ArrivalEnvelope.WINDOWS_NANOS.length; i++) {
            envelope.put(Double.toString(ArrivalEnvelope.WINDOWS_NANOS[i] / 1e9), s.envelope()[i]);
        }
        out.put("envelope_max_arrivals_by_window_s", envelope);
        out.put("arrivals_total", s.arrived());
        out.put("bad_total", s.bad());
        out.put("idle_fraction", Double.isNaN(s.idleFraction()) ? null : s.idleFraction());
        out.put("queue_length", s.queued());
        out.put("ready_replicas", s.ready());
        return out;
    }

    private Mono<ServerResponse> ok(Object body) {
        return bodies.respond(HttpStatus.OK, body);
    }
}
