package io.servegate.sim.latency;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Each model's service time per batch size on each hardware kind: what InferLine's profiler
 * measures, and what the estimator and planner read.
 *
 * <p>One JSON file per model ({@link #read}):
 * <pre>{@code
 * {"model": "classifier",
 *  "hardware": {
 *    "cpu-1t": {"profile": "classifier-cpu-1t.csv"},            // `loadgen profile` output, relative to this file
 *    "cpu-2t": {"latency_ms": {"1": 6.1, "2": 6.9, "4": 8.4}},  // a table: one service time per batch size
 *    "cuda":   {"beta_ms": 2.0, "alpha_ms": 0.05, "noise_sigma": 0.1}}}  // beta + alpha*b (noise optional)
 * }</pre>
 * A CSV profile is the simulator's {@link ServiceProfile} format: every measured batch, drawn
 * from as {@link EmpiricalLatency} does.
 *
 * @param models latency per hardware kind, by model name
 */
public record ModelProfiles(Map<String, Map<String, LatencyModel>> models) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public ModelProfiles {
        Map<String, Map<String, LatencyModel>> copy = new LinkedHashMap<>();
        models.forEach((m, kinds) -> {
            if (kinds.isEmpty()) {
                throw new IllegalArgumentException("model '" + m + "' has no hardware kind");
            }
            copy.put(m, Collections.unmodifiableMap(new LinkedHashMap<>(kinds)));
        });
        models = Collections.unmodifiableMap(copy);
    }

    /** Reads one model file per path, in the format above. */
    public static ModelProfiles read(List<Path> files) throws IOException {
        Map<String, Map<String, LatencyModel>> models = new LinkedHashMap<>();
        for (Path file : files) {
            JsonNode root = JSON.readTree(file.toFile());
            JsonNode model = root.get("model");
            JsonNode hardware = root.get("hardware");
            if (model == null || !model.isTextual() || hardware == null || !hardware.isObject() || hardware.isEmpty()) {
                throw new IOException(file + ": expected {\"model\": NAME, \"hardware\": {KIND: LATENCY, …}}");
            }
            Map<String, LatencyModel> kinds = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> e : hardware.properties()) {
                try {
                    kinds.put(e.getKey(), latency(e.getValue(), file));
                } catch (IllegalArgumentException | IOException x) {
                    throw new IOException(file + ": hardware '" + e.getKey() + "': " + x.getMessage(), x);
                }
            }
            if (models.put(model.asText(), kinds) != null) {
                throw new IOException(file + ": model '" + model.asText() + "' is profiled in two files");
            }
        }
        return new ModelProfiles(models);
    }

    /** The hardware kinds {@code model} was profiled on. */
    public Set<String> kinds(String model) {
        return of(model).keySet();
    }

    /** {@code model}'s latency on {@code kind}. */
    public LatencyModel latency(String model, String kind) {
        LatencyModel l = of(model).get(kind);
        if (l == null) {
            throw new IllegalArgumentException("model '" + model + "' has no profile for hardware '" + kind + "'");
        }
        return l;
    }

    private Map<String, LatencyModel> of(String model) {
        Map<String, LatencyModel> kinds = models.get(model);
        if (kinds == null) {
            throw new IllegalArgumentException("no profile for model '" + model + "'; profiled: " + models.keySet());
        }
        return kinds;
    }

    private static LatencyModel latency(JsonNode spec, Path file) throws IOException {
        if (spec.has("profile")) {
            Path csv = file.toAbsolutePath().resolveSibling(spec.get("profile").asText());
            return new EmpiricalLatency(ServiceProfile.read(csv));
        }
        if (spec.has("latency_ms")) {
            Map<Integer, long[]> samples = new TreeMap<>();
            for (Map.Entry<String, JsonNode> e : spec.get("latency_ms").properties()) {
                if (!e.getValue().isNumber()) {
                    throw new IllegalArgumentException("latency of batch " + e.getKey() + " must be a number");
                }
                samples.put(Integer.parseInt(e.getKey()), new long[] {Math.round(e.getValue().asDouble() * 1e6)});
            }
            return new EmpiricalLatency(new ServiceProfile(samples));
        }
        if (spec.has("beta_ms") && spec.has("alpha_ms")) {
            double sigma = spec.has("noise_sigma") ? spec.get("noise_sigma").asDouble() : 0;
            return new LinearLatency(Math.round(spec.get("beta_ms").asDouble() * 1e6),
                    Math.round(spec.get("alpha_ms").asDouble() * 1e6), sigma);
        }
        throw new IllegalArgumentException("give \"profile\", \"latency_ms\" or \"beta_ms\" and \"alpha_ms\"");
    }
}
