package io.servegate.gateway.api;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.cache.PredictionCache;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.containers.ProcessCommandPolicy;
import io.servegate.gateway.containers.ReplicaStatus;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.gateway.query.SelectionService;
import io.servegate.gateway.dispatch.PlacedModel;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.dispatch.SharedPools;
import io.servegate.sdk.TensorType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Clipper's admin API, same paths and bodies, plus {@code add_container} for replicas the
 * gateway did not start and {@code deploy_model}, {@code set_num_replicas} and
 * {@code get_deployments} for replicas its {@link ContainerManager} runs, and {@code deploy_model}
 * with a {@code pool} and {@code get_placements} for pools of multi-model containers. Every call
 * is a POST with a JSON object, except {@code GET /admin/ping}, {@code GET /admin/get_deployments}
 * and {@code GET /admin/get_placements}.
 */
public final class AdminHandler {

    private static final Pattern HOST = Pattern.compile(
            "(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");
    private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]{2,45}");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,254}");

    private final Registry registry;
    private final ReplicaPool pool;
    private final PredictionCache cache;
    private final SelectionService selection;
    private final JsonBodies bodies;
    private final ContainerManager containers;
    private final ProcessCommandPolicy commandPolicy;
    private final int maxReplicas;

    /** @param commandPolicy what deploy_model may run when the manager is {@code process} */
    public AdminHandler(Registry registry, ReplicaPool pool, PredictionCache cache, SelectionService selection,
            JsonBodies bodies, ContainerManager containers, ProcessCommandPolicy commandPolicy, int maxReplicas) {
        this.registry = registry;
        this.pool = pool;
        this.cache = cache;
        this.selection = selection;
        this.bodies = bodies;
        this.containers = containers;
        this.commandPolicy = commandPolicy;
        this.maxReplicas = maxReplicas;
    }

    public Mono<ServerResponse> ping(ServerRequest request) {
        return ok(Map.of("status", "ok"));
    }

    public Mono<ServerResponse> addApp(ServerRequest request) {
        return write(request, body -> {
            String name = Names.requireValid("app", JsonBodies.requiredString(body, "name"));
            String inputType = TensorType.forName(JsonBodies.requiredString(body, "input_type")).clipperName();
            String defaultOutput = JsonBodies.requiredString(body, "default_output");
            long slo = JsonBodies.requiredLong(body, "latency_slo_micros");
            if (slo <= 0 || slo > 3_600_000_000L) {
                throw ApiException.badRequest("'latency_slo_micros' must be between 1 and 3600000000, got " + slo);
            }
            List<String> models = JsonBodies.stringList(body, "candidate_model_names", false);
            models.forEach(m -> Names.requireValid("model", m));
            SelectionConfig config = selectionConfig(body);
            selection.policy(config); // unknown policies and parameters are refused here, with the accepted ones named
            Application.OverloadResponse overload = Application.OverloadResponse.fromWireName(
                    JsonBodies.optionalString(body, "overload_response", null));
            return registry.addApp(new Application(name, inputType, defaultOutput, slo, models, config, overload));
        });
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

    public Mono<ServerResponse> deleteApp(ServerRequest request) {
        return write(request, body -> registry.deleteApp(JsonBodies.requiredString(body, "name")));
    }

    public Mono<ServerResponse> addModel(ServerRequest request) {
        return write(request, body -> registry.addModel(modelVersion(body,
                JsonBodies.optionalString(body, "container_name", ""))));
    }

    /** The model version an add_model or deploy_model body describes, validated. */
    private ModelVersion modelVersion(JsonNode body, String containerName) {
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
        int maxBatch = (int) JsonBodies.optionalLong(body, "max_batch_size", 1, pool.gatewayMaxBatchSize(),
                ModelVersion.DEFAULT_MAX_BATCH_SIZE);
        return new ModelVersion(name, version, JsonBodies.stringList(body, "labels", false), inputType,
                containerName, JsonBodies.optionalString(body, "model_data_path", ""), (int) batchSize, policy,
                hardware, maxBatch);
    }

    /**
     * Adds the model version unless it exists (then its input type must match) and has the
     * container manager deploy it; a version this call added is deleted again if the deployment
     * is refused. A {@code command} for the {@code process} manager must pass the
     * {@link ProcessCommandPolicy} first (else 403, nothing registered).
     */
    public Mono<ServerResponse> deployModel(ServerRequest request) {
        return bodies.object(request).flatMap(body -> body.hasNonNull("pool") ? deployToPool(body)
                : deploy(body).flatMap(d -> ok(describe(d))));
    }

    private Mono<Deployment> deploy(JsonNode body) {
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
        List<String> addresses = JsonBodies.stringList(body, "addresses", false).stream()
                .map(AdminHandler::validAddress).toList();
        if (image == null && command.isEmpty() && addresses.isEmpty()) {
            throw ApiException.badRequest("give 'image' or 'command' (what to run) or 'addresses' (containers "
                    + "you run)");
        }
        ModelVersion model = modelVersion(body, image != null ? image : command.isEmpty() ? "" : command.get(0));
        JsonNode replicasNode = body.get("num_replicas");
        int replicas = replicasNode == null || replicasNode.isNull()
                ? (addresses.isEmpty() ? replicasMissing() : addresses.size())
                : replicas(body);
        Map<String, String> env = env(body.get("env"));
        if (!command.isEmpty() && containers.kind().equals("process")) {
            commandPolicy.refusal(command, env).ifPresent(cause -> {
                throw new ApiException(HttpStatus.FORBIDDEN, "forbidden", cause);
            });
        }
        DeploymentSpec spec = new DeploymentSpec(model.name(), model.version(), image, command, addresses,
                replicas, resources(body.get("resources")), env);
        return Mono.defer(() -> addUnlessPresent(model)).flatMap(wasAdded -> containers.deploy(spec)
                .onErrorResume(e -> wasAdded
                        ? registry.deleteVersionedModel(model.name(), model.version())
                                .onErrorResume(x -> Mono.empty()).then(Mono.error(e))
                        : Mono.error(e)));
    }

    /** Adds the model version unless it exists, when its input type must match; true when this call added it. */
    private Mono<Boolean> addUnlessPresent(ModelVersion model) {
        return registry.snapshot().model(model.name(), model.version())
                .map(existing -> {
                    if (!existing.inputType().equals(model.inputType())) {
                        throw ApiException.badRequest("model version '" + model.name() + ":" + model.version()
                                + "' exists with input type " + existing.inputType() + ", not "
                                + model.inputType());
                    }
                    return Mono.just(false);
                })
                .orElseGet(() -> registry.addModel(model).thenReturn(true));
    }

    /**
     * deploy_model with a {@code pool}: places the model version on that pool of multi-model
     * containers (see docs/many-models.md), creating the pool from {@code addresses} and
     * {@code memory_budget_bytes} on first use, and adds the version unless it exists.
     */
    private Mono<ServerResponse> deployToPool(JsonNode body) {
        for (String field : List.of("image", "command", "num_replicas", "env", "resources")) {
            if (body.hasNonNull(field)) {
                throw ApiException.badRequest("'" + field + "' deploys single-model replicas; a pool's containers "
                        + "are given by 'addresses'");
            }
        }
        String poolName = Names.requireValid("pool", JsonBodies.requiredString(body, "pool"));
        ModelVersion model = modelVersion(body, poolName);
        List<String> addresses = JsonBodies.stringList(body, "addresses", false).stream()
                .map(AdminHandler::validAddress).toList();
        long budget = JsonBodies.requiredLong(body, "memory_budget_bytes");
        long size = JsonBodies.requiredLong(body, "model_size_bytes");
        long loadMicros = JsonBodies.requiredLong(body, "load_time_micros");
        if (size <= 0 || loadMicros < 0 || loadMicros > 3_600_000_000L) {
            throw ApiException.badRequest("'model_size_bytes' must be > 0 and 'load_time_micros' in 0..3600000000");
        }
        registry.snapshot().model(model.name(), model.version()).filter(m -> !m.inputType().equals(model.inputType()))
                .ifPresent(m -> {
                    throw ApiException.badRequest("model version '" + model.name() + ":" + model.version()
                            + "' exists with input type " + m.inputType() + ", not " + model.inputType());
                });
        try {
            pool.shared().deploy(poolName, addresses, budget, new PlacedModel(model.name(), model.version(),
                    TensorType.forName(model.inputType()), size, loadMicros * 1000));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        } catch (IllegalStateException e) {
            throw new ApiException(HttpStatus.CONFLICT, "conflict", e.getMessage());
        }
        return addUnlessPresent(model).then(ok(Map.of("success", true, "pool", poolName,
                "model", model.name() + ":" + model.version())));
    }

    /** The pools of multi-model containers: each replica with the models it holds, and the models placed. */
    public Mono<ServerResponse> getPlacements(ServerRequest request) {
        return ok(pool.shared().placements().stream().map(AdminHandler::describe).toList());
    }

    private static Map<String, Object> describe(SharedPools.Placement p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pool", p.pool());
        m.put("models", p.models());
        m.put("arrivals", p.arrivals());
        m.put("cold_starts", p.coldStarts());
        m.put("loads", p.loads());
        m.put("evictions", p.evictions());
        m.put("replicas", p.replicas().stream().map(r -> {
            Map<String, Object> rm = new LinkedHashMap<>();
            rm.put("container_id", r.id());
            rm.put("address", r.address());
            rm.put("available", r.available());
            rm.put("memory_budget_bytes", r.budgetBytes());
            rm.put("used_bytes", r.usedBytes());
            rm.put("loaded", r.loaded());
            return rm;
        }).toList());
        return m;
    }

    public Mono<ServerResponse> setNumReplicas(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String name = Names.requireValid("model", JsonBodies.requiredString(body, "model_name"));
            String version = Names.requireValid("model version", JsonBodies.requiredString(body, "model_version"));
            return containers.setReplicas(name, version, replicas(body));
        }).flatMap(d -> ok(describe(d)));
    }

    public Mono<ServerResponse> getDeployments(ServerRequest request) {
        return containers.list().flatMap(ds -> ok(ds.stream().map(this::describe).toList()));
    }

    private int replicas(JsonNode body) {
        long n = JsonBodies.requiredLong(body, "num_replicas");
        if (n < 0 || n > maxReplicas) {
            throw ApiException.badRequest("'num_replicas' must be in 0.." + maxReplicas + ", got " + n);
        }
        return (int) n;
    }

    private static int replicasMissing() {
        throw ApiException.badRequest("missing field 'num_replicas'");
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

    private Map<String, Object> describe(Deployment d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_name", d.modelName());
        m.put("model_version", d.modelVersion());
        m.put("manager", containers.kind());
        m.put("num_replicas", d.desiredReplicas());
        m.put("ready_replicas", d.readyReplicas());
        registry.snapshot().model(d.modelName(), d.modelVersion()).ifPresent(v -> {
            m.put("hardware", v.hardware());
            // the scheduler's own cap once it runs, so that what it applies is what shows
            int applied = pool.maxBatchSize(v.name(), v.version());
            m.put("max_batch_size", applied > 0 ? applied : pool.maxBatchSize(v));
        });
        m.put("replicas", d.replicas().stream().map(AdminHandler::describe).toList());
        return m;
    }

    private static Map<String, Object> describe(ReplicaStatus r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("container_id", r.id());
        m.put("address", r.address());
        m.put("state", r.state().name().toLowerCase(Locale.ROOT));
        m.put("restarts", r.restarts());
        return m;
    }

    public Mono<ServerResponse> setModelVersion(ServerRequest request) {
        return write(request, body -> registry.setModelVersion(JsonBodies.requiredString(body, "model_name"),
                JsonBodies.requiredString(body, "model_version")));
    }

    public Mono<ServerResponse> deleteVersionedModel(ServerRequest request) {
        return write(request, body -> {
            String name = JsonBodies.requiredString(body, "model_name");
            String version = JsonBodies.requiredString(body, "model_version");
            return containers.remove(name, version)
                    .then(registry.deleteVersionedModel(name, version))
                    .then(Mono.fromRunnable(() -> cache.invalidateModel(name, version)));
        });
    }

    public Mono<ServerResponse> addModelLinks(ServerRequest request) {
        return write(request, body -> registry.addModelLinks(JsonBodies.requiredString(body, "app_name"),
                JsonBodies.stringList(body, "model_names", true)));
    }

    public Mono<ServerResponse> deleteModelLinks(ServerRequest request) {
        return write(request, body -> registry.deleteModelLinks(JsonBodies.requiredString(body, "app_name"),
                JsonBodies.stringList(body, "model_names", true)));
    }

    public Mono<ServerResponse> addContainer(ServerRequest request) {
        return bodies.object(request).flatMap(body -> {
            String model = JsonBodies.requiredString(body, "model_name");
            String version = JsonBodies.requiredString(body, "model_version");
            String address = validAddress(JsonBodies.requiredString(body, "address"));
            String id = JsonBodies.optionalString(body, "container_id",
                    model + "-" + version + "-" + UUID.randomUUID().toString().substring(0, 8));
            Names.requireValid("container id", id);
            return registry.addReplica(new ContainerReplica(id, model, version, address))
                    .then(ok(Map.of("success", true, "container_id", id)));
        });
    }

    public Mono<ServerResponse> deleteContainer(ServerRequest request) {
        return write(request, body -> registry.removeReplica(JsonBodies.requiredString(body, "container_id")));
    }

    public Mono<ServerResponse> getAllApplications(ServerRequest request) {
        return read(request, (body, s) -> JsonBodies.optionalBoolean(body, "verbose")
                ? s.apps().stream().map(AdminHandler::describe).toList()
                : s.apps().stream().map(Application::name).toList());
    }

    public Mono<ServerResponse> getApplication(ServerRequest request) {
        return read(request, (body, s) -> describe(QueryHandler.app(s, JsonBodies.requiredString(body, "name"))));
    }

    public Mono<ServerResponse> getLinkedModels(ServerRequest request) {
        return read(request, (body, s) -> QueryHandler.app(s, JsonBodies.requiredString(body, "app_name"))
                .linkedModels());
    }

    public Mono<ServerResponse> getAllModels(ServerRequest request) {
        return read(request, (body, s) -> JsonBodies.optionalBoolean(body, "verbose")
                ? s.models().stream().map(m -> describe(m, s)).toList()
                : s.models().stream().map(m -> m.name() + ":" + m.version()).toList());
    }

    public Mono<ServerResponse> getModel(ServerRequest request) {
        return read(request, (body, s) -> {
            String name = JsonBodies.requiredString(body, "model_name");
            String version = JsonBodies.requiredString(body, "model_version");
            return describe(s.model(name, version).orElseThrow(() ->
                    ApiException.notFound("unknown model '" + name + ":" + version + "'")), s);
        });
    }

    public Mono<ServerResponse> getAllContainers(ServerRequest request) {
        return read(request, (body, s) -> s.models().stream()
                .flatMap(m -> pool.status(m.name(), m.version()).stream())
                .map(AdminHandler::describe).toList());
    }

    private Mono<ServerResponse> write(ServerRequest request, Function<JsonNode, Mono<Void>> action) {
        return bodies.object(request).flatMap(body -> action.apply(body)).then(ok(Map.of("success", true)));
    }

    private Mono<ServerResponse> read(ServerRequest request,
            java.util.function.BiFunction<JsonNode, RegistrySnapshot, Object> query) {
        return request.bodyToMono(String.class).defaultIfEmpty("{}")
                .map(bodies::parseObject)
                .flatMap(body -> ok(query.apply(body, registry.snapshot())));
    }

    /**
     * A container address is {@code host:port} and nothing else: a DNS name (labels of letters,
     * digits and inner hyphens), an IPv4 address or a bracketed IPv6 literal, and an ASCII port
     * in 1..65535. No scheme, path, user info or query, so an address can only ever name a
     * socket for the gateway's gRPC client; it is never resolved here.
     */
    static String validAddress(String address) {
        if (address.length() > 261) {
            throw ApiException.badRequest("container address is " + address.length()
                    + " characters long; host:port is at most 261");
        }
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw ApiException.badRequest("container address " + quote(address) + " must be host:port");
        }
        String host = address.substring(0, colon);
        String portText = address.substring(colon + 1);
        if (!PORT.matcher(portText).matches()) {
            throw ApiException.badRequest("container address " + quote(address) + " has no numeric port");
        }
        int port = Integer.parseInt(portText);
        if (port < 1 || port > 65535) {
            throw ApiException.badRequest("container port must be in 1..65535, got " + port);
        }
        boolean valid = host.startsWith("[") ? host.endsWith("]") && ipv6(host.substring(1, host.length() - 1))
                : HOST.matcher(host).matches();
        if (!valid) {
            throw ApiException.badRequest("container host " + quote(host)
                    + " is not a valid host name, IPv4 address or [IPv6] address");
        }
        return address;
    }

    private static boolean ipv6(String literal) {
        if (!IPV6_CHARS.matcher(literal).matches()) {
            return false;
        }
        try {
            // a literal with ':' is parsed, never looked up
            return java.net.InetAddress.getByName("[" + literal + "]") instanceof java.net.Inet6Address;
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /** Quotes user text for a message, escaping anything outside printable ASCII and cutting it short. */
    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("'");
        for (int i = 0; i < Math.min(s.length(), 80); i++) {
            char c = s.charAt(i);
            sb.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return sb.append(s.length() > 80 ? "...'" : "'").toString();
    }

    private static Map<String, Object> describe(Application a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", a.name());
        m.put("input_type", a.inputType());
        m.put("default_output", a.defaultOutput());
        m.put("latency_slo_micros", a.latencySloMicros());
        m.put("linked_models", a.linkedModels());
        m.put("selection_policy", a.selection().policy());
        m.put("selection_params", a.selection().params());
        m.put("confidence_threshold", a.selection().confidenceThreshold());
        m.put("overload_response", a.overloadResponse().wireName());
        return m;
    }

    private static Map<String, Object> describe(ModelVersion v, RegistrySnapshot s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_name", v.name());
        m.put("model_version", v.version());
        m.put("is_current_version", s.currentVersion(v.name()).map(v.version()::equals).orElse(false));
        m.put("labels", v.labels());
        m.put("input_type", v.inputType());
        m.put("container_name", v.containerName());
        m.put("model_data_path", v.modelDataPath());
        m.put("batch_size", v.batchSize());
        m.put("scheduler", v.scheduler() == null ? null : v.scheduler().id());
        m.put("hardware", v.hardware());
        m.put("max_batch_size", v.maxBatchSize() > 0 ? v.maxBatchSize() : null);
        return m;
    }

    private static Map<String, Object> describe(ReplicaPool.ReplicaStatus r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("container_id", r.replica().id());
        m.put("model_name", r.replica().modelName());
        m.put("model_version", r.replica().modelVersion());
        m.put("address", r.replica().address());
        m.put("available", r.available());
        m.put("queue_length", r.queueLength());
        m.put("max_batch_size", r.maxBatchSize());
        m.put("circuit", r.circuit());
        m.put("idle_fraction", Double.isNaN(r.idleFraction()) ? null : r.idleFraction());
        return m;
    }

    private static Mono<ServerResponse> ok(Object body) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}
