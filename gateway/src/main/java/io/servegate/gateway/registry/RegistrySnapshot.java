package io.servegate.gateway.registry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An immutable view of the registry at one {@link #revision()}: what the request path reads.
 * All lookups are hash-map lookups or return precomputed immutable lists; nothing does I/O or
 * locks, so a snapshot can be read freely from event-loop threads.
 */
public final class RegistrySnapshot {

    private static final Comparator<ModelVersion> MODEL_ORDER = Comparator.comparing(ModelVersion::name)
            .thenComparing(ModelVersion::version, VersionOrder.COMPARATOR);

    private static final RegistrySnapshot EMPTY = new RegistrySnapshot(0, List.of(), List.of(), Map.of(), List.of(),
            List.of(), List.of());

    private final long revision;
    private final Map<String, Application> appsByName;
    private final List<Application> apps;
    private final Map<String, Map<String, ModelVersion>> modelsByName;
    private final Map<String, List<ModelVersion>> versionsByName;
    private final List<ModelVersion> models;
    private final Map<String, String> current;
    private final Map<String, Map<String, List<ContainerReplica>>> replicasByModel;
    private final List<ContainerReplica> replicas;
    private final Map<String, PipelineGraph> pipelinesByName;
    private final List<Pipeline> pipelines;
    private final List<ModelProfile> profiles;

    /**
     * Builds a snapshot; the collections are copied. {@code current} maps model name to current
     * version. Consistency (replicas of existing versions, ...) is the caller's business; the
     * pipelines' graphs must be valid ({@link PipelineGraph#of}).
     */
    RegistrySnapshot(long revision, Collection<Application> apps, Collection<ModelVersion> models,
                     Map<String, String> current, Collection<ContainerReplica> replicas,
                     Collection<PipelineGraph> pipelines, Collection<ModelProfile> profiles) {
        this.revision = revision;
        List<ModelProfile> profileList = new ArrayList<>(profiles);
        profileList.sort(Comparator.comparing(ModelProfile::modelName)
                .thenComparing(ModelProfile::modelVersion, VersionOrder.COMPARATOR)
                .thenComparing(ModelProfile::hardware));
        this.profiles = List.copyOf(profileList);
        List<PipelineGraph> graphs = new ArrayList<>(pipelines);
        graphs.sort(Comparator.comparing(g -> g.pipeline().name()));
        this.pipelines = graphs.stream().map(PipelineGraph::pipeline).toList();
        Map<String, PipelineGraph> graphByName = new HashMap<>();
        graphs.forEach(g -> graphByName.put(g.pipeline().name(), g));
        this.pipelinesByName = Map.copyOf(graphByName);

        List<Application> appList = new ArrayList<>(apps);
        appList.sort(Comparator.comparing(Application::name));
        this.apps = List.copyOf(appList);
        Map<String, Application> byName = new HashMap<>();
        appList.forEach(a -> byName.put(a.name(), a));
        this.appsByName = Map.copyOf(byName);

        List<ModelVersion> modelList = new ArrayList<>(models);
        modelList.sort(MODEL_ORDER);
        this.models = List.copyOf(modelList);
        Map<String, Map<String, ModelVersion>> mByName = new HashMap<>();
        Map<String, List<ModelVersion>> vByName = new HashMap<>();
        for (ModelVersion m : modelList) {
            mByName.computeIfAbsent(m.name(), k -> new HashMap<>()).put(m.version(), m);
            vByName.computeIfAbsent(m.name(), k -> new ArrayList<>()).add(m);
        }
        mByName.replaceAll((k, v) -> Map.copyOf(v));
        vByName.replaceAll((k, v) -> List.copyOf(v));
        this.modelsByName = Map.copyOf(mByName);
        this.versionsByName = Map.copyOf(vByName);
        this.current = Map.copyOf(current);

        List<ContainerReplica> replicaList = new ArrayList<>(replicas);
        replicaList.sort(Comparator.comparing(ContainerReplica::id));
        this.replicas = List.copyOf(replicaList);
        Map<String, Map<String, List<ContainerReplica>>> rByModel = new HashMap<>();
        for (ContainerReplica r : replicaList) {
            rByModel.computeIfAbsent(r.modelName(), k -> new HashMap<>())
                    .computeIfAbsent(r.modelVersion(), k -> new ArrayList<>()).add(r);
        }
        Map<String, Map<String, List<ContainerReplica>>> frozen = new HashMap<>();
        rByModel.forEach((name, byVersion) -> {
            Map<String, List<ContainerReplica>> f = new HashMap<>();
            byVersion.forEach((v, list) -> f.put(v, List.copyOf(list)));
            frozen.put(name, Map.copyOf(f));
        });
        this.replicasByModel = Map.copyOf(frozen);
    }

    /** @return the snapshot of an empty registry, revision 0 */
    public static RegistrySnapshot empty() {
        return EMPTY;
    }

    /** @return the application called {@code name}, if any */
    public Optional<Application> app(String name) {
        return name == null ? Optional.empty() : Optional.ofNullable(appsByName.get(name));
    }

    /** @return all applications, sorted by name (immutable) */
    public List<Application> apps() {
        return apps;
    }

    /** @return the pipeline called {@code name} with its validated graph, if any */
    public Optional<PipelineGraph> pipeline(String name) {
        return name == null ? Optional.empty() : Optional.ofNullable(pipelinesByName.get(name));
    }

    /** @return all pipelines, sorted by name (immutable) */
    public List<Pipeline> pipelines() {
        return pipelines;
    }

    /** @return every stored profile, by model, version (numeric-aware) and hardware kind (immutable) */
    public List<ModelProfile> profiles() {
        return profiles;
    }

    /** @return the profiles of every version of one model, in the order of {@link #profiles()} */
    public List<ModelProfile> profiles(String modelName) {
        return profiles.stream().filter(p -> p.modelName().equals(modelName)).toList();
    }

    /** @return the given version of a model, if it exists */
    public Optional<ModelVersion> model(String name, String version) {
        if (name == null || version == null) {
            return Optional.empty();
        }
        Map<String, ModelVersion> versions = modelsByName.get(name);
        return versions == null ? Optional.empty() : Optional.ofNullable(versions.get(version));
    }

    /** @return the current version of a model; empty if the model has no versions */
    public Optional<String> currentVersion(String modelName) {
        return modelName == null ? Optional.empty() : Optional.ofNullable(current.get(modelName));
    }

    /** @return all versions of one model, in numeric-aware version order (immutable, maybe empty) */
    public List<ModelVersion> versions(String modelName) {
        List<ModelVersion> versions = modelName == null ? null : versionsByName.get(modelName);
        return versions == null ? List.of() : versions;
    }

    /** @return all model versions, sorted by name, then numeric-aware by version (immutable) */
    public List<ModelVersion> models() {
        return models;
    }

    /** @return the replicas serving one model version, sorted by id (immutable, maybe empty) */
    public List<ContainerReplica> replicas(String modelName, String version) {
        Map<String, List<ContainerReplica>> byVersion = modelName == null ? null : replicasByModel.get(modelName);
        List<ContainerReplica> list = byVersion == null || version == null ? null : byVersion.get(version);
        return list == null ? List.of() : list;
    }

    /** @return all replicas, sorted by id (immutable) */
    public List<ContainerReplica> replicas() {
        return replicas;
    }

    /**
     * @return the revision this snapshot shows; every change of the registry increases it (for
     *         Redis it is the store's shared change counter, so two instances showing the same
     *         revision show the same state)
     */
    public long revision() {
        return revision;
    }

    /** @return the current-version map (model name to version), immutable */
    Map<String, String> currentVersions() {
        return current;
    }

    @Override
    public String toString() {
        return "RegistrySnapshot[revision=" + revision + ", apps=" + apps.size() + ", models=" + models.size()
                + ", replicas=" + replicas.size() + ", pipelines=" + pipelines.size() + ", profiles=" + profiles.size() + "]";
    }
}
