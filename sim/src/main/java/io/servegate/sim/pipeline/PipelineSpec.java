package io.servegate.sim.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * A prediction pipeline: a directed acyclic graph of stages under one end-to-end SLO.
 *
 * <p><b>Execution.</b> A stage without incoming edges gets every query. When a stage answers,
 * each of its outgoing edges is taken with its probability. A stage with incoming edges waits
 * until each of them is decided; it runs once all are, if at least one was taken (a combine
 * stage waits for all its taken inputs), and is skipped otherwise, which decides its own
 * outgoing edges as not taken. A query is done when every stage has run or been skipped; its
 * latency runs from its arrival to then.
 *
 * <p><b>JSON</b> ({@link #read}): {@code {"name": …, "slo_ms": …, "stages": [{"name": …,
 * "model": …}, …], "edges": [{"from": …, "to": …, "probability": …}, …]}}. {@code slo_ms} is
 * optional (a planner may be given one), {@code probability} defaults to 1, {@code edges} to none.
 * A gateway pipeline definition ({@code add_pipeline}) reads the same: its
 * {@code latency_slo_micros} is the SLO, and each edge with a {@code when} condition needs the
 * {@code probability} that it holds. Fields that do not change timing ({@code input_type},
 * {@code default_output}, {@code priority}, {@code weight}, a stage's {@code input}, {@code output},
 * {@code deadline_micros}) are
 * accepted; combine stages are refused, and any other field too.
 *
 * @param name the pipeline's name
 * @param sloMs the end-to-end latency objective, or NaN when the file gives none
 * @param stages in a topological order (every edge goes from an earlier stage to a later one)
 * @param edges the edges
 */
public record PipelineSpec(String name, double sloMs, List<PipelineStage> stages, List<PipelineEdge> edges) {

    private static final ObjectMapper JSON = new ObjectMapper();
    // a gateway add_pipeline body is read as it is: the fields that do not change timing are accepted
    private static final Set<String> TOP_FIELDS = Set.of("name", "slo_ms", "latency_slo_micros", "stages", "edges",
            "input_type", "default_output", "priority", "weight");
    private static final Set<String> STAGE_FIELDS = Set.of("name", "model", "input", "output", "deadline_micros",
            "combine");
    private static final Set<String> EDGE_FIELDS = Set.of("from", "to", "probability", "when");

    public PipelineSpec {
        stages = List.copyOf(stages);
        edges = List.copyOf(edges);
        if (stages.isEmpty()) {
            throw new IllegalArgumentException("a pipeline needs at least one stage");
        }
        if (!Double.isNaN(sloMs) && !(sloMs > 0)) {
            throw new IllegalArgumentException("slo_ms must be > 0, got " + sloMs);
        }
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < stages.size(); i++) {
            if (index.put(stages.get(i).name(), i) != null) {
                throw new IllegalArgumentException("two stages are named '" + stages.get(i).name() + "'");
            }
        }
        Set<String> seen = new HashSet<>();
        for (PipelineEdge e : edges) {
            for (String end : List.of(e.from(), e.to())) {
                if (!index.containsKey(end)) {
                    throw new IllegalArgumentException("edge " + e.from() + " -> " + e.to() + ": no stage '" + end + "'");
                }
            }
            if (!seen.add(e.from() + "\u0000" + e.to())) {
                throw new IllegalArgumentException("edge " + e.from() + " -> " + e.to() + " is given twice");
            }
        }
        stages = topological(stages, edges, index);
    }

    /** Reads the JSON format above. */
    public static PipelineSpec read(Path file) throws IOException {
        try {
            return parse(JSON.readTree(file.toFile()));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** Parses the JSON format above. */
    public static PipelineSpec parse(JsonNode root) {
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("a pipeline is a JSON object");
        }
        known(root, "pipeline", TOP_FIELDS);
        List<PipelineStage> stages = new ArrayList<>();
        for (JsonNode s : array(root, "stages")) {
            known(s, "stage", STAGE_FIELDS);
            if (s.has("combine")) {
                throw new IllegalArgumentException("stage '" + s.path("name").asText() + "' is a combine step, which "
                        + "takes no time: give its successors edges from its predecessors instead (a stage waits for "
                        + "all its inputs, as the combine step does)");
            }
            stages.add(new PipelineStage(text(s, "name"), text(s, "model")));
        }
        List<PipelineEdge> edges = new ArrayList<>();
        if (root.has("edges")) {
            for (JsonNode e : array(root, "edges")) {
                known(e, "edge", EDGE_FIELDS);
                JsonNode p = e.get("probability");
                if (p != null && !p.isNumber()) {
                    throw new IllegalArgumentException("edge probability must be a number, got " + p);
                }
                if (p == null && e.has("when")) {
                    throw new IllegalArgumentException("edge " + e.path("from").asText() + " -> " + e.path("to").asText()
                            + " has a condition: give the probability that it holds (measured on sample traffic)");
                }
                edges.add(new PipelineEdge(text(e, "from"), text(e, "to"), p == null ? 1 : p.asDouble()));
            }
        }
        JsonNode name = root.get("name");
        return new PipelineSpec(name == null ? "pipeline" : name.asText(), slo(root), stages, edges);
    }

    /** {@code slo_ms}, or the gateway's {@code latency_slo_micros}; NaN for neither. */
    private static double slo(JsonNode root) {
        JsonNode ms = root.get("slo_ms");
        JsonNode micros = root.get("latency_slo_micros");
        if (ms != null && micros != null) {
            throw new IllegalArgumentException("give slo_ms or latency_slo_micros, not both");
        }
        JsonNode v = ms != null ? ms : micros;
        if (v == null) {
            return Double.NaN;
        }
        if (!v.isNumber()) {
            throw new IllegalArgumentException((ms != null ? "slo_ms" : "latency_slo_micros") + " must be a number, got " + v);
        }
        return ms != null ? v.asDouble() : v.asDouble() / 1000;
    }

    private static void known(JsonNode node, String what, Set<String> fields) {
        if (!node.isObject()) {
            throw new IllegalArgumentException("a " + what + " is a JSON object, got " + node);
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext();) {
            String f = it.next();
            if (!fields.contains(f)) {
                throw new IllegalArgumentException("unknown " + what + " field '" + f + "'; known: " + new TreeSet<>(fields));
            }
        }
    }

    /** This pipeline under another SLO. */
    public PipelineSpec withSloMs(double ms) {
        return new PipelineSpec(name, ms, stages, edges);
    }

    /** The index of the stage named {@code stage}. */
    public int indexOf(String stage) {
        for (int i = 0; i < stages.size(); i++) {
            if (stages.get(i).name().equals(stage)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no stage '" + stage + "'");
    }

    /**
     * The longest path through the graph when stage {@code i} takes {@code cost(i)}: a query's
     * latency with no queueing when every edge on that path is taken.
     */
    public double longestPath(ToDoubleFunction<Integer> cost) {
        double[] finish = new double[stages.size()];
        double longest = 0;
        for (int i = 0; i < stages.size(); i++) {
            double start = 0;
            for (PipelineEdge e : edges) {
                if (e.to().equals(stages.get(i).name())) {
                    start = Math.max(start, finish[indexOf(e.from())]);
                }
            }
            finish[i] = start + cost.applyAsDouble(i);
            longest = Math.max(longest, finish[i]);
        }
        return longest;
    }

    private static List<PipelineStage> topological(List<PipelineStage> stages, List<PipelineEdge> edges,
            Map<String, Integer> index) {
        int n = stages.size();
        int[] indegree = new int[n];
        for (PipelineEdge e : edges) {
            indegree[index.get(e.to())]++;
        }
        List<PipelineStage> order = new ArrayList<>(n);
        boolean[] placed = new boolean[n];
        while (order.size() < n) {
            int next = -1;
            for (int i = 0; i < n && next < 0; i++) {
                if (!placed[i] && indegree[i] == 0) {
                    next = i; // the earliest ready stage in the file's order: a stable order
                }
            }
            if (next < 0) {
                throw new IllegalArgumentException("the edges form a cycle");
            }
            placed[next] = true;
            order.add(stages.get(next));
            for (PipelineEdge e : edges) {
                if (e.from().equals(stages.get(next).name())) {
                    indegree[index.get(e.to())]--;
                }
            }
        }
        return order;
    }

    private static Iterable<JsonNode> array(JsonNode node, String field) {
        JsonNode a = node.get(field);
        if (a == null || !a.isArray()) {
            throw new IllegalArgumentException("'" + field + "' must be an array");
        }
        return a;
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank()) {
            throw new IllegalArgumentException("'" + field + "' must be a non-empty string in " + node);
        }
        return v.asText();
    }
}
