package io.servegate.gateway.registry;

import io.servegate.core.scheduling.Priority;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON form of a {@link Pipeline}, the same in the admin API ({@code add_pipeline},
 * {@code get_pipeline}) and in Redis:
 * <pre>{@code
 * {"name": "cascade", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
 *  "priority": "critical", "weight": 1,
 *  "stages": [{"name": "fast", "model": "fmnist-logreg", "output": "logits"},
 *             {"name": "accurate", "model": "fmnist-cnn"}],
 *  "edges": [{"from": "fast", "to": "accurate", "when": {"confidence_below": 0.9}}]}
 * }</pre>
 * A stage has {@code name}, one of {@code model} and {@code combine} ({@code majority}), and
 * optionally {@code input} ({@code query} | {@code previous}), {@code output} ({@code label} |
 * {@code logits} | a Clipper type name) and {@code deadline_micros}. Reading refuses missing or
 * ill-typed fields with {@link IllegalArgumentException} naming the field; unknown fields are
 * refused too, so that a misspelt {@code when} does not silently make an edge unconditional.
 * {@code priority} ({@code critical} | {@code standard} | {@code sheddable}) and {@code weight} are
 * optional (standard, 1), as on an app.
 */
public final class PipelineJson {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private PipelineJson() {
    }

    /** Reads a pipeline; the graph is not validated here ({@link PipelineGraph#of} does that). */
    public static Pipeline read(JsonNode n) {
        object(n, "pipeline", List.of("name", "input_type", "default_output", "latency_slo_micros", "stages", "edges",
                "priority", "weight", "v"));
        List<PipelineStage> stages = new ArrayList<>();
        int i = 0;
        for (JsonNode s : array(n, "stages", "")) {
            String at = "stages[" + i++ + "]";
            object(s, at, List.of("name", "model", "combine", "input", "output", "deadline_micros"));
            try {
                stages.add(new PipelineStage(string(s, "name", at, true), string(s, "model", at, false),
                        CombineKind.fromWireName(string(s, "combine", at, false)),
                        StageInput.fromWireName(string(s, "input", at, false)),
                        StageOutput.fromWireName(string(s, "output", at, false)),
                        s.hasNonNull("deadline_micros") ? integer(s, "deadline_micros", at) : 0));
            } catch (IllegalArgumentException e) {
                throw e.getMessage().startsWith("'" + at) || e.getMessage().contains(at + ".") ? e
                        : new IllegalArgumentException(at + ": " + e.getMessage());
            }
        }
        List<PipelineEdge> edges = new ArrayList<>();
        i = 0;
        for (JsonNode e : n.hasNonNull("edges") ? array(n, "edges", "") : List.<JsonNode>of()) {
            String at = "edges[" + i++ + "]";
            object(e, at, List.of("from", "to", "when"));
            edges.add(new PipelineEdge(string(e, "from", at, true), string(e, "to", at, true),
                    e.hasNonNull("when") ? condition(e.get("when"), at + ".when") : null));
        }
        String priority = string(n, "priority", "", false);
        int weight = Application.requireWeight(n.hasNonNull("weight") ? integer(n, "weight", "") : 1);
        return new Pipeline(string(n, "name", "", true), string(n, "input_type", "", true),
                string(n, "default_output", "", true), integer(n, "latency_slo_micros", ""), stages, edges,
                priority == null ? Priority.STANDARD : Priority.parse(priority), weight);
    }

    /** Reads a pipeline from its JSON text (Redis), refusing other schema versions. */
    static Pipeline read(String json) {
        JsonNode n = MAPPER.readTree(json);
        if (n.path("v").asInt(-1) != RegistryJson.SCHEMA_VERSION) {
            throw new IllegalArgumentException("unsupported schema version " + n.path("v")
                    + " (this gateway reads v" + RegistryJson.SCHEMA_VERSION + ")");
        }
        return read(n);
    }

    /** Writes a pipeline; fields at their defaults are written too, so equal pipelines give equal text. */
    public static ObjectNode write(Pipeline p) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("name", p.name());
        n.put("input_type", p.inputType());
        n.put("default_output", p.defaultOutput());
        n.put("latency_slo_micros", p.latencySloMicros());
        n.put("priority", p.priority().wireName());
        n.put("weight", p.weight());
        ArrayNode stages = n.putArray("stages");
        for (PipelineStage s : p.stages()) {
            ObjectNode o = stages.addObject();
            o.put("name", s.name());
            if (s.isCombine()) {
                o.put("combine", s.combine().wireName());
            } else {
                o.put("model", s.model());
                o.put("input", s.input().wireName());
            }
            o.put("output", s.output().wireName());
            if (s.deadlineMicros() > 0) {
                o.put("deadline_micros", s.deadlineMicros());
            }
        }
        ArrayNode edges = n.putArray("edges");
        for (PipelineEdge e : p.edges()) {
            ObjectNode o = edges.addObject();
            o.put("from", e.from());
            o.put("to", e.to());
            if (e.when() != null) {
                o.putObject("when").put(e.when().kind().wireName(), e.when().threshold());
            }
        }
        return n;
    }

    /** The JSON text of a pipeline, with the registry's schema version (Redis). */
    static String text(Pipeline p) {
        ObjectNode n = write(p);
        n.put("v", RegistryJson.SCHEMA_VERSION);
        return MAPPER.writeValueAsString(n);
    }

    private static EdgeCondition condition(JsonNode when, String at) {
        if (!when.isObject() || when.size() != 1) {
            throw new IllegalArgumentException("'" + at + "' must be an object with one field, e.g. "
                    + "{\"confidence_below\": 0.9}");
        }
        Map.Entry<String, JsonNode> only = when.properties().iterator().next();
        ConditionKind kind;
        try {
            kind = ConditionKind.fromWireName(only.getKey());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + at + "': " + e.getMessage());
        }
        // an integer beyond a long is no confidence, and its doubleValue() may throw
        if (!only.getValue().isNumber() || only.getValue().isBigInteger()) {
            throw new IllegalArgumentException("'" + at + "." + only.getKey() + "' must be a number in [0, 1]");
        }
        return new EdgeCondition(kind, only.getValue().doubleValue());
    }

    private static void object(JsonNode n, String at, List<String> fields) {
        if (n == null || !n.isObject()) {
            throw new IllegalArgumentException("'" + (at.isEmpty() ? "pipeline" : at) + "' must be a JSON object");
        }
        for (String f : n.propertyNames()) {
            if (!fields.contains(f)) {
                throw new IllegalArgumentException("unknown field '" + path(at, f) + "'; expected " + fields);
            }
        }
    }

    private static JsonNode array(JsonNode n, String field, String at) {
        JsonNode a = n.get(field);
        if (a == null || !a.isArray()) {
            throw new IllegalArgumentException("'" + path(at, field) + "' must be an array");
        }
        return a;
    }

    private static String string(JsonNode n, String field, String at, boolean required) {
        JsonNode f = n.get(field);
        if (f == null || f.isNull()) {
            if (required) {
                throw new IllegalArgumentException("missing field '" + path(at, field) + "'");
            }
            return null;
        }
        if (!f.isString()) {
            throw new IllegalArgumentException("field '" + path(at, field) + "' must be a string");
        }
        return f.stringValue();
    }

    private static long integer(JsonNode n, String field, String at) {
        JsonNode f = n.get(field);
        if (f == null || f.isNull()) {
            throw new IllegalArgumentException("missing field '" + path(at, field) + "'");
        }
        if (!f.isIntegralNumber() || !f.canConvertToLong()) {
            throw new IllegalArgumentException("field '" + path(at, field) + "' must be an integer");
        }
        return f.longValue();
    }

    private static String path(String at, String field) {
        return at.isEmpty() ? field : at + "." + field;
    }
}
