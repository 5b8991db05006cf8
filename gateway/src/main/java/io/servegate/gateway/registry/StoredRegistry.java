package io.servegate.gateway.registry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registry state as {@link RedisRegistry} read it: the snapshot, and the model and pipeline
 * JSON it was parsed from, as Redis held them (what a compare-and-set write expects to find).
 */
record StoredRegistry(RegistrySnapshot snapshot, Map<String, String> models, Map<String, String> pipelines) {

    private static final Logger log = LoggerFactory.getLogger(StoredRegistry.class);

    /**
     * Parses the read script's reply: the revision, then the apps, links, models, current
     * versions, replicas, pipelines and profiles hashes as flat field-value lists. An entry that
     * cannot be read is skipped with a warning naming it and its hash ({@code keys}, in that order
     * from index 0), so one bad entry never hides the rest.
     */
    static StoredRegistry parse(List<Object> reply, String[] keys) {
        long revision = Long.parseLong(String.valueOf(reply.get(0)));
        Map<String, String> apps = pairs(reply.get(1));
        Map<String, String> links = pairs(reply.get(2));
        Map<String, String> models = pairs(reply.get(3));
        Map<String, String> current = pairs(reply.get(4));
        Map<String, String> replicas = pairs(reply.get(5));
        Map<String, String> pipelines = pairs(reply.get(6));
        Map<String, String> profiles = pairs(reply.get(7));

        List<Application> appList = new ArrayList<>();
        apps.forEach((name, json) -> read("app", name, keys[0], () -> appList.add(RegistryJson.readApp(json,
                links.get(name)))));
        List<ModelVersion> modelList = readAll(models, "model version", keys[2], RegistryJson::readModel);
        List<ContainerReplica> replicaList = readAll(replicas, "replica", keys[4], RegistryJson::readReplica);
        List<PipelineGraph> pipelineList = readAll(pipelines, "pipeline", keys[6],
                json -> PipelineGraph.of(PipelineJson.read(json)));
        List<ModelProfile> profileList = readAll(profiles, "profile", keys[7], RegistryJson::readProfile);
        return new StoredRegistry(new RegistrySnapshot(revision, appList, modelList, current, replicaList,
                pipelineList, profileList), Map.copyOf(models), Map.copyOf(pipelines));
    }

    private static <T> List<T> readAll(Map<String, String> hash, String what, String key, Function<String, T> reader) {
        List<T> out = new ArrayList<>();
        hash.forEach((field, json) -> read(what, field, key, () -> out.add(reader.apply(json))));
        return out;
    }

    private static void read(String what, String field, String key, Runnable read) {
        try {
            read.run();
        } catch (RuntimeException e) {
            log.warn("skipping unreadable {} {} in {}: {}", what, field, key, RedisRegistry.describe(e));
        }
    }

    /** A flat HGETALL reply (field, value, field, value, ...) as a map. */
    private static Map<String, String> pairs(Object flat) {
        Map<String, String> out = new HashMap<>();
        if (flat instanceof List<?> list) {
            for (int i = 0; i + 1 < list.size(); i += 2) {
                out.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
            }
        }
        return out;
    }
}
