package io.servegate.gateway.rollout;

import io.servegate.core.rollout.Decision;
import io.servegate.core.rollout.DecisionKind;
import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.RolloutStatus;
import io.servegate.core.rollout.VersionStats;
import io.servegate.core.selection.Task;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The stored JSON form of a {@link Rollout} and of one gateway's {@link RolloutEvidence}, with a
 * {@code "v": 1} schema version. Writing is deterministic (the same rollout gives the same text),
 * which the Redis store's compare-and-set relies on.
 */
final class RolloutJson {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private RolloutJson() {
    }

    static String write(Rollout r) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("v", 1);
        n.put("id", r.id());
        n.put("model", r.model());
        n.put("candidate", r.candidate());
        n.put("baseline", r.baseline());
        n.put("mode", r.mode().name());
        n.put("task", r.task().name());
        n.put("scale", r.scale());
        Guards g = r.guards();
        n.putObject("guards").put("max_slo_miss_increase", g.maxSloMissIncrease()).put("max_error_rate", g.maxErrorRate())
                .put("max_loss_increase", g.maxLossIncrease()).put("min_feedback", g.minFeedback())
                .put("confidence", g.confidence()).put("min_step_queries", g.minStepQueries())
                .put("min_step_ms", g.minStepMillis()).put("warmup_queries", g.warmupQueries());
        ArrayNode steps = n.putArray("steps");
        r.steps().forEach(steps::add);
        n.put("step", r.stepIndex());
        n.put("warming", r.warming());
        n.put("status", r.status().name());
        n.put("step_started_at_ms", r.stepStartedAtMillis());
        n.put("step_start_queries", r.stepStartQueries());
        ArrayNode history = n.putArray("history");
        for (Decision d : r.history()) {
            history.addObject().put("at_ms", d.atMillis()).put("kind", d.kind().name()).put("from", d.fromShare())
                    .put("to", d.toShare()).put("reason", d.reason());
        }
        return MAPPER.writeValueAsString(n);
    }

    static Rollout read(String json) {
        JsonNode n = MAPPER.readTree(json);
        JsonNode g = n.required("guards");
        // rollouts stored before the SLO guard became relative to the baseline name it max_slo_miss_rate
        JsonNode sloMisses = g.has("max_slo_miss_increase") ? g.get("max_slo_miss_increase")
                : g.required("max_slo_miss_rate");
        Guards guards = new Guards(sloMisses.doubleValue(),
                g.required("max_error_rate").doubleValue(), g.required("max_loss_increase").doubleValue(),
                g.required("min_feedback").longValue(), g.required("confidence").doubleValue(),
                g.required("min_step_queries").longValue(), g.required("min_step_ms").longValue(),
                g.path("warmup_queries").asLong(0)); // absent in rollouts stored before warm-ups: none
        List<Double> steps = new ArrayList<>();
        n.required("steps").forEach(s -> steps.add(s.doubleValue()));
        List<Decision> history = new ArrayList<>();
        n.required("history").forEach(d -> history.add(new Decision(d.required("at_ms").longValue(),
                DecisionKind.valueOf(d.required("kind").stringValue()), d.required("from").doubleValue(),
                d.required("to").doubleValue(), d.required("reason").stringValue())));
        return new Rollout(n.required("id").stringValue(), n.required("model").stringValue(),
                n.required("candidate").stringValue(), n.required("baseline").stringValue(),
                RolloutMode.valueOf(n.required("mode").stringValue()), Task.valueOf(n.required("task").stringValue()),
                n.required("scale").doubleValue(), guards, steps, n.required("step").intValue(),
                n.path("warming").asBoolean(false), RolloutStatus.valueOf(n.required("status").stringValue()),
                n.required("step_started_at_ms").longValue(), n.required("step_start_queries").longValue(), history);
    }

    static String writeEvidence(RolloutEvidence e) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("v", 1);
        stats(n.putObject("candidate"), e.candidate());
        stats(n.putObject("baseline"), e.baseline());
        n.put("warmups", e.warmups());
        return MAPPER.writeValueAsString(n);
    }

    static RolloutEvidence readEvidence(String json) {
        JsonNode n = MAPPER.readTree(json);
        return new RolloutEvidence(stats(n.required("candidate")), stats(n.required("baseline")),
                n.path("warmups").asLong(0));
    }

    private static void stats(ObjectNode n, VersionStats s) {
        n.put("queries", s.queries()).put("slo_misses", s.sloMisses()).put("errors", s.errors())
                .put("compared", s.compared()).put("agreements", s.agreements()).put("feedback", s.feedback())
                .put("loss_sum", s.lossSum());
    }

    private static VersionStats stats(JsonNode n) {
        return new VersionStats(n.required("queries").longValue(), n.required("slo_misses").longValue(),
                n.required("errors").longValue(), n.required("compared").longValue(),
                n.required("agreements").longValue(), n.required("feedback").longValue(),
                n.required("loss_sum").doubleValue());
    }
}
