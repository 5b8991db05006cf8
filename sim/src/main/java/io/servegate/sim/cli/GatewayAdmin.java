package io.servegate.sim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.servegate.sim.latency.EmpiricalLatency;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.ModelProfiles;
import io.servegate.sim.latency.ServiceProfile;
import io.servegate.sim.pipeline.PipelineSpec;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@code bin/sim plan --gateway} reads from and writes to a gateway's admin API: a
 * pipeline's definition ({@code get_pipeline}), the stored profiles ({@code get_profiles}) as the
 * planner's {@link ModelProfiles}, and the plan ({@code apply_pipeline_plan}).
 */
final class GatewayAdmin {

    private final GatewayAdminClient client;

    /** @param url the admin server, e.g. {@code http://127.0.0.1:1338}; {@code token} null to send none */
    GatewayAdmin(String url, String token) {
        // planning a large pipeline on the gateway's side may take a while
        this.client = new GatewayAdminClient(url, token, Duration.ofMinutes(5));
    }

    /**
     * The pipeline as {@link PipelineSpec} reads it: {@code get_pipeline}'s answer without what the
     * gateway adds ({@code stage_deadlines_micros}, {@code planned}), each conditional edge given
     * its probability from {@code probabilities} ({@code "from:to"} to a probability).
     */
    PipelineSpec pipeline(String name, Map<String, Double> probabilities) throws IOException, InterruptedException {
        ObjectNode p = (ObjectNode) post("get_pipeline", Map.of("name", name));
        p.remove("stage_deadlines_micros");
        p.remove("planned");
        Map<String, Double> unused = new TreeMap<>(probabilities);
        for (JsonNode e : p.path("edges")) {
            Double probability = unused.remove(e.path("from").asText() + ":" + e.path("to").asText());
            if (probability != null) {
                ((ObjectNode) e).put("probability", probability);
            }
        }
        if (!unused.isEmpty()) {
            throw new IllegalArgumentException("pipeline '" + name + "' has no edge " + unused.keySet());
        }
        return PipelineSpec.parse(p);
    }

    /**
     * Every stored profile, as one latency model per model and hardware kind: each batch size's
     * mean service time, interpolated between sizes ({@link EmpiricalLatency}). Where versions of
     * a model were profiled on one kind, the latest measurement counts.
     */
    ModelProfiles profiles() throws IOException, InterruptedException {
        Map<String, Map<String, JsonNode>> latest = new LinkedHashMap<>();
        for (JsonNode p : post("get_profiles", Map.of())) {
            Map<String, JsonNode> kinds = latest.computeIfAbsent(p.path("model_name").asText(), k -> new TreeMap<>());
            JsonNode had = kinds.get(p.path("hardware").asText());
            if (had == null || had.path("measured_at").asText().compareTo(p.path("measured_at").asText()) < 0) {
                kinds.put(p.path("hardware").asText(), p);
            }
        }
        Map<String, Map<String, LatencyModel>> models = new LinkedHashMap<>();
        latest.forEach((model, kinds) -> kinds.forEach((kind, p) -> {
            Map<Integer, long[]> means = new TreeMap<>();
            for (Iterator<JsonNode> it = p.path("batches").elements(); it.hasNext();) {
                JsonNode b = it.next();
                means.put(b.path("batch_size").asInt(), new long[] {Math.max(1, Math.round(b.path("mean_ms").asDouble() * 1e6))});
            }
            models.computeIfAbsent(model, k -> new LinkedHashMap<>())
                    .put(kind, new EmpiricalLatency(new ServiceProfile(means)));
        }));
        return new ModelProfiles(models);
    }

    /** {@code apply_pipeline_plan}; the gateway's answer. */
    JsonNode apply(Map<String, Object> plan) throws IOException, InterruptedException {
        return post("apply_pipeline_plan", plan);
    }

    private JsonNode post(String endpoint, Object body) throws IOException, InterruptedException {
        return client.post(endpoint, body);
    }
}
