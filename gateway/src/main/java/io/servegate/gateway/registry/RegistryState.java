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

    static RegistryState of(RegistrySnapshot s) {
        RegistryState st = new RegistryState();
        s.apps().forEach(a -> st.apps.put(a.name(), a));
        s.models().forEach(m -> st.models.computeIfAbsent(m.name(), k -> new TreeMap<>(VersionOrder.COMPARATOR))
                .put(m.version(), m));
        st.current.putAll(s.currentVersions());
        s.replicas().forEach(r -> st.replicas.put(r.id(), r));
        s.pipelines().forEach(p -> st.pipelines.put(p.name(), s.pipeline(p.name()).orElseThrow()));
        return st;
    }

    RegistrySnapshot toSnapshot(long revision) {
        List<ModelVersion> all = new ArrayList<>();
        models.values().forEach(v -> all.addAll(v.values()));
        return new RegistrySnapshot(revision, apps.values(), all, current, replicas.values(), pipelines.values());
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

    private static Application withLinks(Application a, Set<String> links) {
        return new Application(a.name(), a.inputType(), a.defaultOutput(), a.latencySloMicros(), List.copyOf(links),
                a.selection(), a.overloadResponse());
    }
}
