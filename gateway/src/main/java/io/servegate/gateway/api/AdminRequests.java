package io.servegate.gateway.api;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.containers.ProcessCommandPolicy;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.RateLimit;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.gateway.dispatch.PlacedModel;
import io.servegate.oip.client.TensorType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;
import org.springframework.http.HttpStatus;
import tools.jackson.databind.JsonNode;

/**
 * The admin API's request bodies, read into typed requests: the one place where their fields are
 * checked (400 naming the field; 403 for a command the allowlist refuses). Fields are checked in
 * the order the API documents them, so a body with several problems is told about the same one
 * every time.
 */
public final class AdminRequests {

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,254}");
    private static final long MAX_SLO_MICROS = 3_600_000_000L;

    /** deploy_model for single-model replicas: the version to register and what the manager runs. */
    record Deploy(ModelVersion model, DeploymentSpec spec) {
    }

    /** deploy_model with a {@code pool}: the version to register and where it is placed. */
    record PoolDeploy(String pool, ModelVersion model, List<String> addresses, long memoryBudgetBytes,
            PlacedModel placed) {
    }

    /** set_num_replicas. */
    record Replicas(String modelName, String modelVersion, int replicas) {
    }

    private final int maxReplicas;
    private final IntSupplier maxBatchSize;
    private final Consumer<SelectionConfig> selectionCheck;
    private final ProcessCommandPolicy commandPolicy;

    /**
     * @param maxReplicas    the most replicas one call may ask for
     * @param maxBatchSize   the largest {@code max_batch_size} a model version may have
     * @param selectionCheck refuses an unknown selection policy or parameter, naming the accepted ones
     * @param commandPolicy  what a {@code command} may run; null where the manager runs no commands
     */
    public AdminRequests(int maxReplicas, IntSupplier maxBatchSize, Consumer<SelectionConfig> selectionCheck,
            ProcessCommandPolicy commandPolicy) {
        this.maxReplicas = maxReplicas;
        this.maxBatchSize = maxBatchSize;
        this.selectionCheck = selectionCheck;
        this.commandPolicy = commandPolicy;
    }

    /** add_app. */
    Application app(JsonNode body) {
        String name = Names.requireValid("app", JsonBodies.requiredString(body, "name"));
        String inputType = TensorType.forName(JsonBodies.requiredString(body, "input_type")).clipperName();
        String defaultOutput = JsonBodies.requiredString(body, "default_output");
        long slo = JsonBodies.requiredLong(body, "latency_slo_micros");
        if (slo <= 0 || slo > MAX_SLO_MICROS) {
            throw ApiException.badRequest("'latency_slo_micros' must be between 1 and 3600000000, got " + slo);
        }
        List<String> models = JsonBodies.stringList(body, "candidate_model_names", false);
        models.forEach(m -> Names.requireValid("model", m));
        SelectionConfig config = selectionConfig(body);
        selectionCheck.accept(config);
        Application.OverloadResponse overload = Application.OverloadResponse.fromWireName(
                JsonBodies.optionalString(body, "overload_response", null));
        return new Application(name, inputType, defaultOutput, slo, models, config, overload,
                rateLimit(body.get("rate_limit")), priority(body.get("priority")), weight(body.get("weight")));
    }

    /** An optional {@code priority}: standard when absent. */
    static Priority priority(JsonNode n) {
        if (n == null || n.isNull()) {
            return Priority.STANDARD;
        }
        if (!n.isString()) {
            throw ApiException.badRequest("'priority' must be one of critical, standard, sheddable");
        }
        try {
            return Priority.parse(n.asString());
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("'priority': " + e.getMessage());
        }
    }

    /** An optional {@code weight} among the apps of the same priority: 1 when absent. */
    static int weight(JsonNode n) {
        if (n == null || n.isNull()) {
            return 1;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() < 1 || n.asInt() > Tenant.MAX_WEIGHT) {
            throw ApiException.badRequest("'weight' must be an integer in 1.." + Tenant.MAX_WEIGHT + ", got " + n);
        }
        return n.asInt();
    }

    /** An optional {@code rate_limit} {@code {per_second, burst}}: null when absent. */
    static RateLimit rateLimit(JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isObject() || !(n.path("per_second").isNumber()) || !n.path("burst").isIntegralNumber()
                || !n.path("burst").canConvertToInt()) {
            throw ApiException.badRequest("'rate_limit' must be an object {\"per_second\": number > 0, "
                    + "\"burst\": integer >= 1}");
        }
        try {
            return new RateLimit(n.path("per_second").asDouble(), n.path("burst").asInt());
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
    }

    /** The extension fields {@code selection_policy}, {@code selection_params} and {@code confidence_threshold}. */
    private static SelectionConfig selectionConfig(JsonNode body) {
        String policy = JsonBodies.optionalString(body, "selection_policy", SelectionConfig.SINGLE.policy());
        Map<String, String> params = new LinkedHashMap<>();
        JsonNode p = body.get("selection_params");
        if (p != null && !p.isNull()) {
            if (!p.isObject()) {
                throw ApiException.badRequest("'selection_params' must be an object of names to numbers or strings");
            }
            for (Map.Entry<String, JsonNode> e : p.properties()) {
                if (!(e.getValue().isNumber() || e.getValue().isString())) {
                    throw ApiException.badRequest("'selection_params." + e.getKey() + "' must be a number or a string");
                }
                params.put(e.getKey(), e.getValue().asString());
            }
        }
        JsonNode t = body.get("confidence_threshold");
        double threshold = 0;
        if (t != null && !t.isNull()) {
            threshold = t.isNumber() ? JsonBodies.toDouble(t) : Double.NaN;
            if (!(threshold >= 0 && threshold <= 1)) {
                throw ApiException.badRequest("'confidence_threshold' must be a number in [0, 1]");
            }
        }
        return new SelectionConfig(policy, params, threshold);
    }

    /** The model version an add_model or deploy_model body describes. */
    ModelVersion modelVersion(JsonNode body, String containerName) {
        String name = Names.requireValid("model", JsonBodies.requiredString(body, "model_name"));
        String version = Names.requireValid("model version", JsonBodies.requiredString(body, "model_version"));
        String inputType = TensorType.forName(JsonBodies.requiredString(body, "input_type")).clipperName();
        JsonNode batchSizeNode = body.get("batch_size");
        long batchSize = batchSizeNode == null || batchSizeNode.isNull() ? -1
                : JsonBodies.requiredLong(body, "batch_size");
        if (batchSize == 0 || batchSize < -1 || batchSize > 1_000_000) {
            throw ApiException.badRequest("'batch_size' must be -1 (adaptive) or in 1..1000000, got " + batchSize);
        }
        String scheduler = JsonBodies.optionalString(body, "scheduler", null);
        PolicyKind policy;
        try {
            policy = scheduler == null ? null : PolicyKind.of(scheduler);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("'scheduler': " + e.getMessage());
        }
        String hardware = Names.requireValid("hardware",
                JsonBodies.optionalString(body, "hardware", ModelVersion.DEFAULT_HARDWARE));
        int maxBatch = (int) JsonBodies.optionalLong(body, "max_batch_size", 1, maxBatchSize.getAsInt(),
                ModelVersion.DEFAULT_MAX_BATCH_SIZE);
        return new ModelVersion(name, version, JsonBodies.stringList(body, "labels", false), inputType,
                containerName, JsonBodies.optionalString(body, "model_data_path", ""), (int) batchSize, policy,
                hardware, maxBatch);
    }

    /** deploy_model without a {@code pool}. */
    Deploy deploy(JsonNode body) {
        String image = JsonBodies.optionalString(body, "image", null);
        if (image != null && image.isBlank()) {
            throw ApiException.badRequest("'image' must not be blank");
        }
        List<String> command = JsonBodies.stringList(body, "command", false);
        for (String arg : command) {
            if (arg.isEmpty() || arg.indexOf('\0') >= 0) {
                throw ApiException.badRequest("'command' must be non-empty strings without NUL characters");
            }
        }
        List<String> addresses = addresses(body);
        if (image == null && command.isEmpty() && addresses.isEmpty()) {
            throw ApiException.badRequest("give 'image' or 'command' (what to run) or 'addresses' (containers "
                    + "you run)");
        }
        ModelVersion model = modelVersion(body, image != null ? image : command.isEmpty() ? "" : command.get(0));
        JsonNode replicasNode = body.get("num_replicas");
        int replicas;
        if (replicasNode != null && !replicasNode.isNull()) {
            replicas = replicas(body);
        } else if (!addresses.isEmpty()) {
            replicas = addresses.size();
        } else {
            throw ApiException.badRequest("missing field 'num_replicas'");
        }
        Map<String, String> env = env(body.get("env"));
        if (!command.isEmpty() && commandPolicy != null) {
            commandPolicy.refusal(command, env).ifPresent(cause -> {
                throw new ApiException(HttpStatus.FORBIDDEN, "forbidden", cause);
            });
        }
        return new Deploy(model, new DeploymentSpec(model.name(), model.version(), image, command, addresses,
                replicas, resources(body.get("resources")), env));
    }

    /** deploy_model with a {@code pool}: no single-model fields, the pool's addresses and budget, the model's size. */
    PoolDeploy poolDeploy(JsonNode body) {
        for (String field : List.of("image", "command", "num_replicas", "env", "resources")) {
            if (body.hasNonNull(field)) {
                throw ApiException.badRequest("'" + field + "' deploys single-model replicas; a pool's containers "
                        + "are given by 'addresses'");
            }
        }
        String pool = Names.requireValid("pool", JsonBodies.requiredString(body, "pool"));
        ModelVersion model = modelVersion(body, pool);
        List<String> addresses = addresses(body);
        long budget = JsonBodies.requiredLong(body, "memory_budget_bytes");
        long size = JsonBodies.requiredLong(body, "model_size_bytes");
        long loadMicros = JsonBodies.requiredLong(body, "load_time_micros");
        if (size <= 0 || loadMicros < 0 || loadMicros > MAX_SLO_MICROS) {
            throw ApiException.badRequest("'model_size_bytes' must be > 0 and 'load_time_micros' in 0..3600000000");
        }
        return new PoolDeploy(pool, model, addresses, budget, new PlacedModel(model.name(), model.version(),
                TensorType.forName(model.inputType()), size, loadMicros * 1000));
    }

    /** set_num_replicas. */
    Replicas setReplicas(JsonNode body) {
        String name = Names.requireValid("model", JsonBodies.requiredString(body, "model_name"));
        String version = Names.requireValid("model version", JsonBodies.requiredString(body, "model_version"));
        return new Replicas(name, version, replicas(body));
    }

    /** add_container: a replica the gateway did not start, with a generated id unless one is given. */
    ContainerReplica container(JsonNode body) {
        String model = JsonBodies.requiredString(body, "model_name");
        String version = JsonBodies.requiredString(body, "model_version");
        String address = ContainerAddress.validate(JsonBodies.requiredString(body, "address"));
        String id = JsonBodies.optionalString(body, "container_id",
                model + "-" + version + "-" + UUID.randomUUID().toString().substring(0, 8));
        Names.requireValid("container id", id);
        return new ContainerReplica(id, model, version, address);
    }

    private static List<String> addresses(JsonNode body) {
        return JsonBodies.stringList(body, "addresses", false).stream().map(ContainerAddress::validate).toList();
    }

    private int replicas(JsonNode body) {
        long n = JsonBodies.requiredLong(body, "num_replicas");
        if (n < 0 || n > maxReplicas) {
            throw ApiException.badRequest("'num_replicas' must be in 0.." + maxReplicas + ", got " + n);
        }
        return (int) n;
    }

    private static DeploymentSpec.Resources resources(JsonNode r) {
        if (r == null || r.isNull()) {
            return DeploymentSpec.Resources.NONE;
        }
        if (!r.isObject()) {
            throw ApiException.badRequest("'resources' must be an object {cpus, memory_bytes, gpus}");
        }
        for (String field : r.propertyNames()) {
            if (!List.of("cpus", "memory_bytes", "gpus").contains(field)) {
                throw ApiException.badRequest("unknown field 'resources." + field + "'; known are cpus, memory_bytes, gpus");
            }
        }
        JsonNode cpus = r.get("cpus");
        if (cpus != null && !cpus.isNull() && !(cpus.isNumber() && JsonBodies.toDouble(cpus) >= 0
                && JsonBodies.toDouble(cpus) <= 1024)) {
            throw ApiException.badRequest("'resources.cpus' must be a number in 0..1024");
        }
        long memory = r.has("memory_bytes") ? JsonBodies.requiredLong(r, "memory_bytes") : 0;
        long gpus = r.has("gpus") ? JsonBodies.requiredLong(r, "gpus") : 0;
        if (memory < 0 || gpus < 0 || gpus > 64) {
            throw ApiException.badRequest("'resources.memory_bytes' must be >= 0 and 'resources.gpus' in 0..64");
        }
        return new DeploymentSpec.Resources(cpus == null || cpus.isNull() ? 0 : cpus.doubleValue(), memory,
                (int) gpus);
    }

    private static Map<String, String> env(JsonNode e) {
        if (e == null || e.isNull()) {
            return Map.of();
        }
        if (!e.isObject()) {
            throw ApiException.badRequest("'env' must be an object of variable names to strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> v : e.properties()) {
            if (!ENV_NAME.matcher(v.getKey()).matches()) {
                throw ApiException.badRequest("'env' variable name '" + v.getKey() + "' must match [A-Za-z_][A-Za-z0-9_]*");
            }
            if (!v.getValue().isString() || v.getValue().stringValue().indexOf('\0') >= 0) {
                throw ApiException.badRequest("'env." + v.getKey() + "' must be a string without NUL characters");
            }
            out.put(v.getKey(), v.getValue().stringValue());
        }
        return out;
    }
}
