package io.servegate.gateway.registry;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A validated pipeline's graph: its stages in topological order and each stage's incoming
 * edges. {@link #of} checks every rule that needs no registry state and refuses a graph with
 * {@code INVALID}, naming the problem:
 * <ul>
 *   <li>1 to {@value #MAX_STAGES} stages with valid, unique names; each asks a model or combines;</li>
 *   <li>edges join existing, different stages, at most one edge per pair; a conditional edge's
 *       threshold is in [0, 1] and its source answers with a confidence ({@code logits}, or a
 *       combine stage);</li>
 *   <li>no cycles, and exactly one final stage (no outgoing edges);</li>
 *   <li>types: a stage given the query's input has a model taking the pipeline's input type; a
 *       stage given its predecessor's output has exactly one incoming edge from a stage whose
 *       output feeds a model ({@link StageOutput#feeds()}), and its model must take that type; a
 *       combine stage has at least two predecessors, each answering a label ({@code label},
 *       {@code logits} or a combine stage);</li>
 *   <li>a plan is all or nothing: either every model stage has a {@code deadline_micros} or
 *       none has, combine stages have none, and the planned budgets along any path add up to at
 *       most the SLO.</li>
 * </ul>
 */
public final class PipelineGraph {

    /** The most stages a pipeline may have. */
    public static final int MAX_STAGES = 64;

    private final Pipeline pipeline;
    private final List<PipelineStage> order;
    private final Map<String, Integer> position;
    private final Map<String, List<PipelineEdge>> incoming;
    private final Map<String, String> modelInputTypes;

    private PipelineGraph(Pipeline pipeline, List<PipelineStage> order, Map<String, List<PipelineEdge>> incoming,
            Map<String, String> modelInputTypes) {
        this.pipeline = pipeline;
        this.order = List.copyOf(order);
        this.position = new HashMap<>();
        for (int i = 0; i < order.size(); i++) {
            position.put(order.get(i).name(), i);
        }
        Map<String, List<PipelineEdge>> in = new HashMap<>();
        incoming.forEach((k, v) -> in.put(k, List.copyOf(v)));
        this.incoming = Map.copyOf(in);
        this.modelInputTypes = Map.copyOf(modelInputTypes);
    }

    /**
     * Validates a pipeline's structure and types (not that its models exist).
     *
     * @throws RegistryException {@code INVALID} naming the first problem found
     */
    public static PipelineGraph of(Pipeline p) {
        if (p == null) {
            throw RegistryException.invalid("pipeline is missing (null)");
        }
        RegistryChecks.name("pipeline", p.name());
        String where = "pipeline '" + p.name() + "': ";
        RegistryChecks.inputType(p.inputType());
        if (p.defaultOutput() == null) {
            throw RegistryException.invalid(where + "default output is missing (null)");
        }
        if (p.latencySloMicros() <= 0) {
            throw RegistryException.invalid(where + "latency SLO must be > 0 microseconds, was "
                    + p.latencySloMicros());
        }
        if (p.stages().isEmpty() || p.stages().size() > MAX_STAGES) {
            throw RegistryException.invalid(where + "must have 1 to " + MAX_STAGES + " stages, has "
                    + p.stages().size());
        }
        Map<String, PipelineStage> stages = new LinkedHashMap<>();
        for (PipelineStage s : p.stages()) {
            RegistryChecks.name("stage", s.name());
            if (stages.put(s.name(), s) != null) {
                throw RegistryException.invalid(where + "two stages are named '" + s.name() + "'");
            }
            if ((s.model() == null) == (s.combine() == null)) {
                throw RegistryException.invalid(where + "stage '" + s.name()
                        + "' must name exactly one of a model and a combine step");
            }
            if (s.model() != null) {
                RegistryChecks.name("model", s.model());
            }
            if (s.deadlineMicros() < 0 || (s.isCombine() && s.deadlineMicros() != 0)) {
                throw RegistryException.invalid(where + "stage '" + s.name() + "': deadline_micros must be "
                        + (s.isCombine() ? "absent for a combine stage" : ">= 0") + ", was " + s.deadlineMicros());
            }
        }
        Map<String, List<PipelineEdge>> in = new HashMap<>();
        Map<String, List<String>> out = new HashMap<>();
        stages.keySet().forEach(n -> {
            in.put(n, new ArrayList<>());
            out.put(n, new ArrayList<>());
        });
        Set<String> pairs = new HashSet<>();
        for (PipelineEdge e : p.edges()) {
            if (e == null || !stages.containsKey(e.from()) || !stages.containsKey(e.to())) {
                throw RegistryException.invalid(where + "edge " + describe(e) + " names a stage that does not exist");
            }
            if (e.from().equals(e.to())) {
                throw RegistryException.invalid(where + "edge " + describe(e) + " is a cycle (a stage feeding itself)");
            }
            if (!pairs.add(e.from() + '\u0000' + e.to())) {
                throw RegistryException.invalid(where + "edge " + describe(e) + " is listed twice");
            }
            if (e.when() != null) {
                double t = e.when().threshold();
                if (e.when().kind() == null || !(t >= 0 && t <= 1)) {
                    throw RegistryException.invalid(where + "edge " + describe(e)
                            + ": a condition needs a kind and a threshold in [0, 1], got " + t);
                }
                PipelineStage from = stages.get(e.from());
                if (!from.isCombine() && !from.output().hasConfidence()) {
                    throw RegistryException.invalid(where + "edge " + describe(e) + " tests the confidence of stage '"
                            + e.from() + "', whose output '" + from.output().wireName()
                            + "' has none (use 'logits', or a combine stage)");
                }
            }
            in.get(e.to()).add(e);
            out.get(e.from()).add(e.to());
        }
        List<PipelineStage> order = topologicalOrder(where, stages, in, out);
        List<String> sinks = order.stream().filter(s -> out.get(s.name()).isEmpty()).map(PipelineStage::name).toList();
        if (sinks.size() != 1) {
            throw RegistryException.invalid(where + "exactly one stage must have no outgoing edges (the final "
                    + "stage); " + sinks.size() + " have none: " + sinks);
        }
        Map<String, String> modelTypes = checkTypes(where, p, stages, in);
        checkPlan(where, p, order, in);
        return new PipelineGraph(p, order, in, modelTypes);
    }

    private static List<PipelineStage> topologicalOrder(String where, Map<String, PipelineStage> stages,
            Map<String, List<PipelineEdge>> in, Map<String, List<String>> out) {
        Map<String, Integer> waiting = new HashMap<>();
        Deque<String> ready = new ArrayDeque<>();
        for (String n : stages.keySet()) {
            waiting.put(n, in.get(n).size());
            if (in.get(n).isEmpty()) {
                ready.add(n);
            }
        }
        List<PipelineStage> order = new ArrayList<>();
        while (!ready.isEmpty()) {
            String n = ready.poll();
            order.add(stages.get(n));
            for (String next : out.get(n)) {
                if (waiting.merge(next, -1, Integer::sum) == 0) {
                    ready.add(next);
                }
            }
        }
        if (order.size() < stages.size()) {
            throw RegistryException.invalid(where + "the edges form a cycle: " + cycle(stages, waiting, out));
        }
        return order;
    }

    /** A cycle among the stages Kahn's algorithm could not order, as {@code a -> b -> a}. */
    private static String cycle(Map<String, PipelineStage> stages, Map<String, Integer> waiting,
            Map<String, List<String>> out) {
        // every unordered stage has an unordered predecessor, so walking successors that are still
        // waiting must come back to a stage already on the walk
        String start = stages.keySet().stream().filter(n -> waiting.get(n) > 0).findFirst().orElseThrow();
        List<String> walk = new ArrayList<>();
        String n = start;
        while (!walk.contains(n)) {
            walk.add(n);
            n = out.get(n).stream().filter(m -> waiting.get(m) > 0).findFirst().orElseThrow();
        }
        List<String> loop = new ArrayList<>(walk.subList(walk.indexOf(n), walk.size()));
        loop.add(n);
        return String.join(" -> ", loop);
    }

    private static Map<String, String> checkTypes(String where, Pipeline p, Map<String, PipelineStage> stages,
            Map<String, List<PipelineEdge>> in) {
        Map<String, String> modelTypes = new LinkedHashMap<>();
        for (PipelineStage s : stages.values()) {
            List<PipelineEdge> edges = in.get(s.name());
            if (s.isCombine()) {
                if (edges.size() < 2) {
                    throw RegistryException.invalid(where + "combine stage '" + s.name()
                            + "' needs at least two incoming edges, has " + edges.size());
                }
                if (s.output() != StageOutput.LABEL) {
                    throw RegistryException.invalid(where + "combine stage '" + s.name()
                            + "' answers a label; its output must be 'label', not '" + s.output().wireName() + "'");
                }
                for (PipelineEdge e : edges) {
                    PipelineStage from = stages.get(e.from());
                    if (!from.isCombine() && from.output() != StageOutput.LABEL
                            && from.output() != StageOutput.LOGITS) {
                        throw RegistryException.invalid(where + "combine stage '" + s.name() + "' joins labels, but '"
                                + from.name() + "' answers '" + from.output().wireName() + "'");
                    }
                }
                continue;
            }
            String type;
            if (s.input() == StageInput.PREVIOUS) {
                if (edges.size() != 1) {
                    throw RegistryException.invalid(where + "stage '" + s.name() + "' takes its predecessor's output, "
                            + "so it needs exactly one incoming edge, has " + edges.size());
                }
                PipelineStage from = stages.get(edges.get(0).from());
                type = from.output().feeds();
                if (type == null) {
                    throw RegistryException.invalid(where + "stage '" + s.name() + "' takes the output of '"
                            + from.name() + "', which answers '" + from.output().wireName()
                            + "' and can feed no model");
                }
            } else {
                type = p.inputType();
            }
            String before = modelTypes.putIfAbsent(s.model(), type);
            if (before != null && !before.equals(type)) {
                throw RegistryException.invalid(where + "model '" + s.model() + "' would be given '" + before
                        + "' in one stage and '" + type + "' in stage '" + s.name() + "'");
            }
        }
        return modelTypes;
    }

    private static void checkPlan(String where, Pipeline p, List<PipelineStage> order,
            Map<String, List<PipelineEdge>> in) {
        long planned = order.stream().filter(s -> !s.isCombine() && s.deadlineMicros() > 0).count();
        long models = order.stream().filter(s -> !s.isCombine()).count();
        if (planned == 0) {
            return;
        }
        if (planned != models) {
            throw RegistryException.invalid(where + "a plan gives every model stage a deadline_micros; "
                    + planned + " of " + models + " have one");
        }
        Map<String, Long> end = new HashMap<>();
        for (PipelineStage s : order) {
            long start = in.get(s.name()).stream().mapToLong(e -> end.get(e.from())).max().orElse(0);
            long e = start + s.deadlineMicros();
            if (e > p.latencySloMicros()) {
                throw RegistryException.invalid(where + "the planned deadlines up to stage '" + s.name() + "' add up to "
                        + e + " µs, more than the SLO of " + p.latencySloMicros() + " µs");
            }
            end.put(s.name(), e);
        }
    }

    private static String describe(PipelineEdge e) {
        return e == null ? "(null)" : "'" + e.from() + "' -> '" + e.to() + "'";
    }

    /** @return the pipeline this graph was built from */
    public Pipeline pipeline() {
        return pipeline;
    }

    /** @return the stages in topological order (ties in the order listed); the final stage is last */
    public List<PipelineStage> order() {
        return order;
    }

    /** @return the stage's position in {@link #order()} */
    public int position(String stage) {
        return position.get(stage);
    }

    /** @return the edges into a stage, in the order listed (empty for a first stage) */
    public List<PipelineEdge> incoming(String stage) {
        return incoming.get(stage);
    }

    /** @return each stage model's name and the input type the pipeline gives it */
    public Map<String, String> modelInputTypes() {
        return modelInputTypes;
    }

    /** @return whether the pipeline carries a plan (per-stage deadlines) */
    public boolean planned() {
        return order.stream().anyMatch(s -> s.deadlineMicros() > 0);
    }
}
