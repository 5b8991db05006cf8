package io.servegate.gateway.registry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A mutable copy of a snapshot with the registry's write rules; each operation validates
 * everything before changing anything and returns whether it changed the state. The Lua script in
 * {@link RedisScripts} implements the same rules, with the same messages, on the Redis side.
 * Not thread-safe.
 */
final class RegistryState {

    private final Map<String, Application> apps = new HashMap<>();
    /** model name to (version to model), versions in numeric-aware order. */
    private final Map<String, TreeMap<String, ModelVersion>> models = new HashMap<>();
    private final Map<String, String> current = new HashMap<>();
    private final Map<String, ContainerReplica> replicas = new HashMap<>();
    private final Map<String, PipelineGraph> pipelines = new HashMap<>();
    /** profile key (name:version:hardware) to profile. */
    private final Map<String, ModelProfile> profiles = new HashMap<>();

    static RegistryState of(RegistrySnapshot s) {
        RegistryState st = new RegistryState();
        s.apps().forEach(a -> st.apps.put(a.name(), a));
        s.models().forEach(m -> st.models.computeIfAbsent(m.name(), k -> new TreeMap<>(VersionOrder.COMPARATOR))
                .put(m.version(), m));
        st.current.putAll(s.currentVersions());
        s.replicas().forEach(r -> st.replicas.put(r.id(), r));
        s.pipelines().forEach(p -> st.pipelines.put(p.name(), s.pipeline(p.name()).orElseThrow()));
        s.profiles().forEach(p -> st.profiles.put(p.key(), p));
        return st;
    }

    RegistrySnapshot toSnapshot(long revision) {
        List<ModelVersion> all = new ArrayList<>();
        models.values().forEach(v -> all.addAll(v.values()));
        return new RegistrySnapshot(revision, apps.values(), all, current, replicas.values(), pipelines.values(),
                profiles.values());
    }

    /** @return the input type of a model (all its versions share it), or null if it has no versions */
    private String modelInputType(String name) {
        TreeMap<String, ModelVersion> versions = models.get(name);
        return versions == null || versions.isEmpty() ? null : versions.firstEntry().getValue().inputType();
    }

    private void checkLinkable(String appName, String appType, List<String> modelNames) {
        for (String m : modelNames) {
            String t = modelInputType(m);
            if (t == null) {
                throw RegistryException.notFound("model '" + m + "' not found");
            }
            if (!t.equals(appType)) {
                throw RegistryException.invalid("model '" + m + "' takes '" + t + "' but app '" + appName
                        + "' takes '" + appType + "'");
            }
        }
    }

    boolean addApp(Application app) {
        app = RegistryChecks.app(app);
        if (apps.containsKey(app.name())) {
            throw RegistryException.conflict("app '" + app.name() + "' already exists");
        }
        if (pipelines.containsKey(app.name())) {
            throw RegistryException.conflict("a pipeline named '" + app.name() + "' exists");
        }
        checkLinkable(app.name(), app.inputType(), app.linkedModels());
        apps.put(app.name(), app);
        return true;
    }

    boolean deleteApp(String name) {
        RegistryChecks.name("app", name);
        if (apps.remove(name) == null) {
            throw RegistryException.notFound("app '" + name + "' not found");
        }
        return true;
    }

    boolean addPipeline(Pipeline p) {
        PipelineGraph graph = PipelineGraph.of(p);
        if (pipelines.containsKey(p.name())) {
            throw RegistryException.conflict("pipeline '" + p.name() + "' already exists");
        }
        if (apps.containsKey(p.name())) {
            throw RegistryException.conflict("an app named '" + p.name() + "' exists");
        }
        graph.modelInputTypes().forEach((model, type) -> {
            String t = modelInputType(model);
            if (t == null) {
                throw RegistryException.notFound("model '" + model + "' not found");
            }
            if (!t.equals(type)) {
                throw RegistryException.invalid("model '" + model + "' takes '" + t + "' but pipeline '" + p.name()
                        + "' gives it '" + type + "'");
            }
        });
        pipelines.put(p.name(), graph);
        return true;
    }

    boolean deletePipeline(String name) {
        RegistryChecks.name("pipeline", name);
        if (pipelines.remove(name) == null) {
            throw RegistryException.notFound("pipeline '" + name + "' not found");
        }
        return true;
    }

    boolean addModel(ModelVersion m) {
        RegistryChecks.model(m);
        TreeMap<String, ModelVersion> versions = models.get(m.name());
        if (versions != null && versions.containsKey(m.version())) {
            throw RegistryException.conflict("model version '" + m.name() + ":" + m.version() + "' already exists");
        }
        String t = modelInputType(m.name());
        if (t != null && !t.equals(m.inputType())) {
            throw RegistryException.invalid("model '" + m.name() + "' takes '" + t + "'; version '" + m.version()
                    + "' declares '" + m.inputType() + "'");
        }
        if (t == null) {
            // no versions left: links that survived must still fit
            for (Application a : new TreeMap<>(apps).values()) {
                if (a.linkedModels().contains(m.name()) && !a.inputType().equals(m.inputType())) {
                    throw RegistryException.invalid("app '" + a.name() + "' is linked to model '" + m.name()
                            + "' and takes '" + a.inputType() + "'; version '" + m.version() + "' declares '"
                            + m.inputType() + "'");
                }
            }
        }
        models.computeIfAbsent(m.name(), k -> new TreeMap<>(VersionOrder.COMPARATOR)).put(m.version(), m);
        current.put(m.name(), m.version());
        return true;
    }

    boolean setModelVersion(String name, String version) {
        RegistryChecks.name("model", name);
        RegistryChecks.name("version", version);
        TreeMap<String, ModelVersion> versions = models.get(name);
        if (versions == null || !versions.containsKey(version)) {
            throw RegistryException.notFound("model version '" + name + ":" + version + "' not found");
        }
        return !version.equals(current.put(name, version));
    }

    boolean deleteVersionedModel(String name, String version) {
        RegistryChecks.name("model", name);
        RegistryChecks.name("version", version);
        TreeMap<String, ModelVersion> versions = models.get(name);
        if (versions == null || versions.remove(version) == null) {
            throw RegistryException.notFound("model version '" + name + ":" + version + "' not found");
        }
        replicas.values().removeIf(r -> r.modelName().equals(name) && r.modelVersion().equals(version));
        profiles.values().removeIf(p -> p.modelName().equals(name) && p.modelVersion().equals(version));
        if (versions.isEmpty()) {
            models.remove(name);
            current.remove(name);
        } else if (version.equals(current.get(name))) {
            current.put(name, versions.lastKey());
        }
        return true;
    }

    boolean addModelLinks(String appName, List<String> modelNames) {
        RegistryChecks.name("app", appName);
        List<String> wanted = RegistryChecks.modelNames(modelNames);
        Application app = apps.get(appName);
        if (app == null) {
            throw RegistryException.notFound("app '" + appName + "' not found");
        }
        checkLinkable(appName, app.inputType(), wanted);
        Set<String> links = new LinkedHashSet<>(app.linkedModels());
        if (!links.addAll(wanted)) {
            return false;
        }
        apps.put(appName, withLinks(app, links));
        return true;
    }

    boolean deleteModelLinks(String appName, List<String> modelNames) {
        RegistryChecks.name("app", appName);
        RegistryChecks.plainNames(modelNames);
        Application app = apps.get(appName);
        if (app == null) {
            throw RegistryException.notFound("app '" + appName + "' not found");
        }
        Set<String> links = new LinkedHashSet<>(app.linkedModels());
        if (!links.removeAll(new LinkedHashSet<>(modelNames))) {
            return false;
        }
        apps.put(appName, withLinks(app, links));
        return true;
    }

    boolean addReplica(ContainerReplica r) {
        RegistryChecks.replica(r);
        TreeMap<String, ModelVersion> versions = models.get(r.modelName());
        if (versions == null || !versions.containsKey(r.modelVersion())) {
            throw RegistryException.notFound("model version '" + r.modelName() + ":" + r.modelVersion()
                    + "' not found");
        }
        return !r.equals(replicas.put(r.id(), r));
    }

    boolean removeReplica(String id) {
        RegistryChecks.replicaId(id);
        return replicas.remove(id) != null;
    }

    boolean putProfile(ModelProfile p) {
        RegistryChecks.profile(p);
        TreeMap<String, ModelVersion> versions = models.get(p.modelName());
        if (versions == null || !versions.containsKey(p.modelVersion())) {
            throw RegistryException.notFound("model version '" + p.modelName() + ":" + p.modelVersion()
                    + "' not found");
        }
        return !p.equals(profiles.put(p.key(), p));
    }

    /**
     * Validates a plan completely, then applies it: the pipeline with the planned deadlines, the
     * model versions with their new maximum batch sizes.
     */
    boolean applyPipelinePlan(PipelinePlanChange change) {
        Planned planned = planned(change);
        boolean changed = !planned.pipeline().equals(pipelines.get(change.pipeline()).pipeline());
        pipelines.put(change.pipeline(), PipelineGraph.of(planned.pipeline()));
        for (ModelVersion m : planned.models()) {
            changed |= !m.equals(models.get(m.name()).put(m.version(), m));
        }
        return changed;
    }

    /** A plan's records after the change; nothing is changed here. */
    record Planned(Pipeline pipeline, List<ModelVersion> models) {
    }

    /** The records {@link #applyPipelinePlan} would write, validated ({@code NOT_FOUND}, {@code INVALID}). */
    Planned planned(PipelinePlanChange change) {
        if (change == null) {
            throw RegistryException.invalid("plan is missing (null)");
        }
        RegistryChecks.name("pipeline", change.pipeline());
        PipelineGraph graph = pipelines.get(change.pipeline());
        if (graph == null) {
            throw RegistryException.notFound("pipeline '" + change.pipeline() + "' not found");
        }
        Pipeline p = graph.pipeline();
        for (Map.Entry<String, Long> e : new TreeMap<>(change.deadlineMicros()).entrySet()) {
            PipelineStage stage = p.stages().stream().filter(s -> s.name().equals(e.getKey())).findFirst()
                    .orElseThrow(() -> RegistryException.invalid("pipeline '" + p.name() + "' has no stage '"
                            + e.getKey() + "'"));
            if (stage.isCombine()) {
                throw RegistryException.invalid("stage '" + e.getKey() + "' combines: it takes no deadline");
            }
            if (e.getValue() == null || e.getValue() <= 0) {
                throw RegistryException.invalid("stage '" + e.getKey() + "': deadline_micros must be > 0, was "
                        + e.getValue());
            }
        }
        List<PipelineStage> stages = p.stages().stream().map(s -> {
            Long d = change.deadlineMicros().get(s.name());
            return d == null ? s : new PipelineStage(s.name(), s.model(), s.combine(), s.input(), s.output(), d);
        }).toList();
        Pipeline next = new Pipeline(p.name(), p.inputType(), p.defaultOutput(), p.latencySloMicros(), stages, p.edges());
        PipelineGraph.of(next); // a plan covers every model stage and fits the SLO
        List<ModelVersion> changed = new ArrayList<>();
        for (PipelinePlanChange.BatchCap cap : change.batchCaps()) {
            TreeMap<String, ModelVersion> versions = models.get(cap.modelName());
            ModelVersion m = versions == null ? null : versions.get(cap.modelVersion());
            if (m == null) {
                throw RegistryException.notFound("model version '" + cap.modelName() + ":" + cap.modelVersion()
                        + "' not found");
            }
            if (cap.maxBatchSize() < 1) {
                throw RegistryException.invalid("model version '" + cap.modelName() + ":" + cap.modelVersion()
                        + "': max batch size must be >= 1, was " + cap.maxBatchSize());
            }
            changed.add(m.withMaxBatchSize(cap.maxBatchSize()));
        }
        return new Planned(next, changed);
    }

    private static Application withLinks(Application a, Set<String> links) {
        return a.withLinkedModels(List.copyOf(links));
    }
}
