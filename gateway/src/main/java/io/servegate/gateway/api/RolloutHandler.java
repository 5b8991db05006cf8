package io.servegate.gateway.api;

import io.servegate.core.rollout.Decision;
import io.servegate.core.rollout.GuardValue;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutDecider;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.VersionStats;
import io.servegate.core.selection.Task;
import io.servegate.gateway.rollout.RolloutAdmin;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The rollout admin calls ({@code start_rollout}, {@code get_rollout}, {@code pause_rollout},
 * {@code resume_rollout}, {@code abort_rollout}): reads their bodies, refusing unknown fields and
 * values out of range with a 400 naming them, and answers with the rollout's view (its state,
 * guards with their current values, evidence and history).
 */
public final class RolloutHandler {

    private static final List<String> START_FIELDS = List.of("model_name", "candidate_version", "mode", "task",
            "scale", "steps", "shadow_fraction", "guards");
    /** The fraction of queries a shadow rollout copies to its candidate when {@code shadow_fraction} is not given. */
    static final double DEFAULT_SHADOW_FRACTION = 0.1;
    private static final List<String> GUARD_FIELDS = List.of("max_slo_miss_increase", "max_error_rate",
            "max_loss_increase", "min_feedback", "confidence", "min_step_queries", "min_step_ms", "warmup_queries");

    private final RolloutAdmin rollouts;
    private final JsonBodies bodies;

    public RolloutHandler(RolloutAdmin rollouts, JsonBodies bodies) {
        this.rollouts = rollouts;
        this.bodies = bodies;
    }

    public Mono<ServerResponse> start(ServerRequest request) {
        return bodies.object(request).flatMap(body -> rollouts.start(startRequest(body)))
                .flatMap(r -> rollouts.get(r.model())).flatMap(v -> ok(view(v)));
    }

    public Mono<ServerResponse> get(ServerRequest request) {
        return bodies.object(request).flatMap(body -> rollouts.get(model(body))).flatMap(v -> ok(view(v)));
    }

    public Mono<ServerResponse> pause(ServerRequest request) {
        return bodies.object(request).flatMap(body -> rollouts.pause(model(body)))
                .flatMap(r -> rollouts.get(r.model())).flatMap(v -> ok(view(v)));
    }

    public Mono<ServerResponse> resume(ServerRequest request) {
        return bodies.object(request).flatMap(body -> rollouts.resume(model(body)))
                .flatMap(r -> rollouts.get(r.model())).flatMap(v -> ok(view(v)));
    }

    public Mono<ServerResponse> abort(ServerRequest request) {
        return bodies.object(request).flatMap(body -> rollouts.abort(model(body)))
                .flatMap(r -> rollouts.get(r.model())).flatMap(v -> ok(view(v)));
    }

    private static String model(JsonNode body) {
        JsonBodies.onlyFields(body, "the request", List.of("model_name"));
        return JsonBodies.requiredString(body, "model_name");
    }

    static RolloutAdmin.Request startRequest(JsonNode body) {
        JsonBodies.onlyFields(body, "start_rollout", START_FIELDS);
        RolloutMode mode = RolloutMode.parse(JsonBodies.optionalString(body, "mode", "canary"));
        Task task = Task.parse(JsonBodies.optionalString(body, "task", "classification"));
        double scale = number(body, "scale", 1.0);
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw ApiException.badRequest("'scale' must be a positive number, got " + scale);
        }
        List<Double> steps = new ArrayList<>();
        JsonNode s = body.get("steps");
        if (s != null && !s.isNull()) {
            if (!s.isArray() || s.isEmpty()) {
                throw ApiException.badRequest("'steps' must be a non-empty array of shares in (0, 1]");
            }
            for (JsonNode step : s) {
                if (!step.isNumber()) {
                    throw ApiException.badRequest("'steps' must be a non-empty array of shares in (0, 1]");
                }
                steps.add(JsonBodies.toDouble(step));
            }
        }
        JsonNode fraction = body.get("shadow_fraction");
        boolean hasFraction = fraction != null && !fraction.isNull();
        if (mode == RolloutMode.SHADOW) {
            if (!steps.isEmpty()) {
                throw ApiException.badRequest("'steps' applies to mode 'canary'; a shadow rollout takes "
                        + "'shadow_fraction', the fraction of queries copied to the candidate");
            }
            double f = number(body, "shadow_fraction", DEFAULT_SHADOW_FRACTION);
            if (!(f > 0 && f <= 1)) {
                throw ApiException.badRequest("'shadow_fraction' must be in (0, 1], got " + f);
            }
            steps.add(f);
        } else if (hasFraction) {
            throw ApiException.badRequest("'shadow_fraction' applies to mode 'shadow'; a canary takes 'steps'");
        }
        return new RolloutAdmin.Request(JsonBodies.requiredString(body, "model_name"),
                JsonBodies.requiredString(body, "candidate_version"), mode, task, scale, guards(body.get("guards")),
                steps);
    }

    /** The guards given, each defaulting to {@link Guards#DEFAULTS}; the ranges are checked by {@link Guards}. */
    private static Guards guards(JsonNode g) {
        if (g == null || g.isNull()) {
            return Guards.DEFAULTS;
        }
        if (!g.isObject()) {
            throw ApiException.badRequest("'guards' must be an object with any of " + String.join(", ", GUARD_FIELDS));
        }
        JsonBodies.onlyFields(g, "'guards'", GUARD_FIELDS);
        Guards d = Guards.DEFAULTS;
        return new Guards(number(g, "max_slo_miss_increase", d.maxSloMissIncrease()),
                number(g, "max_error_rate", d.maxErrorRate()), number(g, "max_loss_increase", d.maxLossIncrease()),
                JsonBodies.optionalLong(g, "min_feedback", 0, Long.MAX_VALUE, d.minFeedback()),
                number(g, "confidence", d.confidence()),
                JsonBodies.optionalLong(g, "min_step_queries", 0, Long.MAX_VALUE, d.minStepQueries()),
                JsonBodies.optionalLong(g, "min_step_ms", 0, Long.MAX_VALUE, d.minStepMillis()),
                JsonBodies.optionalLong(g, "warmup_queries", 0, Long.MAX_VALUE, d.warmupQueries()));
    }

    private static double number(JsonNode body, String field, double fallback) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isNumber()) {
            throw ApiException.badRequest("'" + field + "' must be a number");
        }
        return JsonBodies.toDouble(n);
    }

    static Map<String, Object> view(RolloutAdmin.View v) {
        Rollout r = v.rollout();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", r.id());
        out.put("model_name", r.model());
        out.put("candidate_version", r.candidate());
        out.put("baseline_version", r.baseline());
        out.put("mode", lower(r.mode()));
        out.put("task", lower(r.task()));
        out.put("scale", r.scale());
        out.put("status", lower(r.status()));
        out.put("step", r.stepIndex());
        out.put("warming", r.warming());
        out.put("steps", r.steps());
        out.put("share", r.share());
        Guards g = r.guards();
        Map<String, Object> guards = new LinkedHashMap<>();
        guards.put("max_slo_miss_increase", g.maxSloMissIncrease());
        guards.put("max_error_rate", g.maxErrorRate());
        guards.put("max_loss_increase", g.maxLossIncrease());
        guards.put("min_feedback", g.minFeedback());
        guards.put("confidence", g.confidence());
        guards.put("min_step_queries", g.minStepQueries());
        guards.put("min_step_ms", g.minStepMillis());
        guards.put("warmup_queries", g.warmupQueries());
        out.put("guards", guards);
        List<Map<String, Object>> values = new ArrayList<>();
        for (GuardValue gv : RolloutDecider.guardValues(r, v.evidence())) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("guard", gv.guard());
            m.put("value", finite(gv.value()));
            m.put("lower", gv.lower());
            m.put("upper", gv.upper());
            m.put("limit", gv.limit());
            m.put("verdict", lower(gv.verdict()));
            values.add(m);
        }
        out.put("guard_values", values);
        out.put("evidence", Map.of("candidate", stats(v.evidence().candidate()),
                "baseline", stats(v.evidence().baseline()), "warmups", v.evidence().warmups()));
        List<Map<String, Object>> history = new ArrayList<>();
        for (Decision d : r.history()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("at_ms", d.atMillis());
            m.put("decision", lower(d.kind()));
            m.put("from_share", d.fromShare());
            m.put("to_share", d.toShare());
            m.put("reason", d.reason());
            history.add(m);
        }
        out.put("history", history);
        return out;
    }

    private static Map<String, Object> stats(VersionStats s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("queries", s.queries());
        m.put("slo_misses", s.sloMisses());
        m.put("errors", s.errors());
        m.put("compared", s.compared());
        m.put("agreements", s.agreements());
        m.put("agreement_rate", s.compared() == 0 ? null : (double) s.agreements() / s.compared());
        m.put("feedback", s.feedback());
        m.put("mean_loss", finite(s.meanLoss()));
        return m;
    }

    /** JSON has no NaN: no value yet is null. */
    private static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    private static Mono<ServerResponse> ok(Object body) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}
