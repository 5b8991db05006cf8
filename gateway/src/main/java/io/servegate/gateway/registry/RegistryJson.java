package io.servegate.gateway.registry;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.Priority;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON form of registry records in Redis. Every object carries {@code "v": 1}, the schema
 * version; readers refuse other versions. Field order is fixed, so equal records encode to equal
 * strings (the Lua script relies on that to detect a no-op replica replacement).
 *
 * <p>App links are not part of the app object: they live in their own hash as a JSON array of
 * model names, so that the Lua script can edit them without re-encoding the app (Redis' cjson
 * would turn an empty array into {@code {}} and large integers into floats).
 */
final class RegistryJson {

    static final int SCHEMA_VERSION = 1;

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private RegistryJson() {
    }

    static String app(Application a) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("v", SCHEMA_VERSION);
        n.put("name", a.name());
        n.put("inputType", a.inputType());
        n.put("defaultOutput", a.defaultOutput());
        n.put("latencySloMicros", a.latencySloMicros());
        ObjectNode selection = n.putObject("selection");
        selection.put("policy", a.selection().policy());
        selection.put("confidenceThreshold", a.selection().confidenceThreshold());
        ObjectNode params = selection.putObject("params");
        a.selection().params().forEach(params::put);
        n.put("overloadResponse", a.overloadResponse().wireName());
        if (a.rateLimit() != null) {
            n.putObject("rateLimit").put("perSecond", a.rateLimit().perSecond()).put("burst", a.rateLimit().burst());
        }
        n.put("priority", a.priority().wireName());
        n.put("weight", a.weight());
        return MAPPER.writeValueAsString(n);
    }

    static String links(List<String> models) {
        ArrayNode arr = MAPPER.createArrayNode();
        models.forEach(arr::add);
        return MAPPER.writeValueAsString(arr);
    }

    static String model(ModelVersion m) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("v", SCHEMA_VERSION);
        n.put("name", m.name());
        n.put("version", m.version());
        ArrayNode labels = n.putArray("labels");
        m.labels().forEach(labels::add);
        n.put("inputType", m.inputType());
        n.put("containerName", m.containerName());
        n.put("modelDataPath", m.modelDataPath());
        n.put("batchSize", m.batchSize());
        if (m.scheduler() != null) {
            n.put("scheduler", m.scheduler().id());
        }
        n.put("hardware", m.hardware());
        n.put("maxBatchSize", m.maxBatchSize());
        return MAPPER.writeValueAsString(n);
    }

    static String replica(ContainerReplica r) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("v", SCHEMA_VERSION);
        n.put("id", r.id());
        n.put("modelName", r.modelName());
        n.put("modelVersion", r.modelVersion());
        n.put("address", r.address());
        return MAPPER.writeValueAsString(n);
    }

    static String profile(ModelProfile p) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("v", SCHEMA_VERSION);
        n.put("modelName", p.modelName());
        n.put("modelVersion", p.modelVersion());
        n.put("hardware", p.hardware());
        n.put("replicaId", p.replicaId());
        n.put("address", p.address());
        n.put("measuredAt", p.measuredAt().toString());
        n.put("samples", p.samples());
        n.put("roundTrip", p.roundTrip());
        ArrayNode batches = n.putArray("batches");
        for (ModelProfile.BatchLatency b : p.batches()) {
            ObjectNode o = batches.addObject();
            o.put("batchSize", b.batchSize());
            o.put("meanMs", b.meanMs());
            o.put("p99Ms", b.p99Ms());
        }
        return MAPPER.writeValueAsString(n);
    }

    static ModelProfile readProfile(String json) {
        JsonNode n = read(json);
        List<ModelProfile.BatchLatency> batches = new ArrayList<>();
        n.path("batches").forEach(b -> batches.add(new ModelProfile.BatchLatency(b.path("batchSize").asInt(),
                b.path("meanMs").asDouble(), b.path("p99Ms").asDouble())));
        return new ModelProfile(text(n, "modelName"), text(n, "modelVersion"), text(n, "hardware"),
                text(n, "replicaId"), text(n, "address"), java.time.Instant.parse(text(n, "measuredAt")),
                n.path("samples").asInt(), n.path("roundTrip").asBoolean(), batches);
    }

    static Application readApp(String json, String linksJson) {
        JsonNode n = read(json);
        List<String> links = linksJson == null ? List.of() : strings(MAPPER.readTree(linksJson));
        JsonNode sel = n.path("selection");
        Map<String, String> params = new LinkedHashMap<>();
        sel.path("params").properties().forEach(e -> params.put(e.getKey(), e.getValue().asString()));
        SelectionConfig selection = sel.isObject()
                ? new SelectionConfig(text(sel, "policy"), params, sel.path("confidenceThreshold").asDouble(0))
                : SelectionConfig.SINGLE;
        return new Application(text(n, "name"), text(n, "inputType"), text(n, "defaultOutput"),
                n.path("latencySloMicros").asLong(), links, selection,
                Application.OverloadResponse.fromWireName(text(n, "overloadResponse")), rateLimit(n.path("rateLimit")),
                n.hasNonNull("priority") ? Priority.parse(n.get("priority").asString()) : Priority.STANDARD,
                n.path("weight").asInt(1));
    }

    private static RateLimit rateLimit(JsonNode n) {
        return n.isObject() ? new RateLimit(n.path("perSecond").asDouble(), n.path("burst").asInt()) : null;
    }

    static ModelVersion readModel(String json) {
        JsonNode n = read(json);
        return new ModelVersion(text(n, "name"), text(n, "version"), strings(n.path("labels")), text(n, "inputType"),
                text(n, "containerName"), text(n, "modelDataPath"), n.path("batchSize").asInt(),
                n.hasNonNull("scheduler") ? PolicyKind.of(n.get("scheduler").asString()) : null,
                text(n, "hardware"), n.path("maxBatchSize").asInt(ModelVersion.DEFAULT_MAX_BATCH_SIZE));
    }

    static ContainerReplica readReplica(String json) {
        JsonNode n = read(json);
        return new ContainerReplica(text(n, "id"), text(n, "modelName"), text(n, "modelVersion"), text(n, "address"));
    }

    private static JsonNode read(String json) {
        JsonNode n = MAPPER.readTree(json);
        if (!n.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        int v = n.path("v").asInt(-1);
        if (v != SCHEMA_VERSION) {
            throw new IllegalArgumentException("unsupported schema version " + n.path("v")
                    + " (this gateway reads v" + SCHEMA_VERSION + ")");
        }
        return n;
    }

    private static String text(JsonNode n, String field) {
        JsonNode f = n.get(field);
        return f == null || f.isNull() ? null : f.asString();
    }

    private static List<String> strings(JsonNode arr) {
        List<String> out = new ArrayList<>();
        if (arr != null && arr.isArray()) {
            arr.forEach(e -> out.add(e.asString()));
        }
        return out;
    }
}
