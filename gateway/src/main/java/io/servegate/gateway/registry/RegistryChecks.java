package io.servegate.gateway.registry;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Argument validation shared by the registry implementations; failures are {@code INVALID}. */
final class RegistryChecks {

    /** Clipper's input type names. */
    static final Set<String> INPUT_TYPES = Set.of("ints", "floats", "doubles", "bytes", "strings");

    private RegistryChecks() {
    }

    static String name(String kind, String name) {
        try {
            return Names.requireValid(kind, name);
        } catch (IllegalArgumentException e) {
            throw RegistryException.invalid(e.getMessage());
        }
    }

    static String inputType(String inputType) {
        if (inputType == null || !INPUT_TYPES.contains(inputType)) {
            throw RegistryException.invalid("unknown input type " + (inputType == null ? "(null)" : "'" + inputType + "'")
                    + "; expected one of ints, floats, doubles, bytes, strings");
        }
        return inputType;
    }

    /** @return the model names, validated and de-duplicated, in order */
    static List<String> modelNames(List<String> models) {
        if (models == null) {
            throw RegistryException.invalid("model list is missing (null)");
        }
        Set<String> out = new LinkedHashSet<>();
        for (String m : models) {
            out.add(name("model", m));
        }
        return new ArrayList<>(out);
    }

    /** @return the list, checked to be non-null without null elements (names are not validated) */
    static List<String> plainNames(List<String> names) {
        if (names == null) {
            throw RegistryException.invalid("model list is missing (null)");
        }
        for (String n : names) {
            if (n == null) {
                throw RegistryException.invalid("model list contains null");
            }
        }
        return names;
    }

    static Application app(Application app) {
        if (app == null) {
            throw RegistryException.invalid("app is missing (null)");
        }
        name("app", app.name());
        inputType(app.inputType());
        if (app.defaultOutput() == null) {
            throw RegistryException.invalid("app '" + app.name() + "': default output is missing (null)");
        }
        if (app.latencySloMicros() <= 0) {
            throw RegistryException.invalid("app '" + app.name() + "': latency SLO must be > 0 microseconds, was "
                    + app.latencySloMicros());
        }
        List<String> links = modelNames(app.linkedModels());
        return links.equals(app.linkedModels()) ? app : app.withLinkedModels(links);
    }

    static ModelVersion model(ModelVersion m) {
        if (m == null) {
            throw RegistryException.invalid("model is missing (null)");
        }
        name("model", m.name());
        name("version", m.version());
        inputType(m.inputType());
        if (m.batchSize() != ModelVersion.ADAPTIVE_BATCH_SIZE && m.batchSize() <= 0) {
            throw RegistryException.invalid("model version '" + m.name() + ":" + m.version()
                    + "': batch size must be -1 (adaptive) or > 0, was " + m.batchSize());
        }
        name("hardware", m.hardware());
        if (m.maxBatchSize() < 0) {
            throw RegistryException.invalid("model version '" + m.name() + ":" + m.version()
                    + "': max batch size must be 0 (the gateway's) or > 0, was " + m.maxBatchSize());
        }
        return m;
    }

    static ContainerReplica replica(ContainerReplica r) {
        if (r == null) {
            throw RegistryException.invalid("replica is missing (null)");
        }
        replicaId(r.id());
        name("model", r.modelName());
        name("version", r.modelVersion());
        if (r.address() == null || r.address().isBlank()) {
            throw RegistryException.invalid("replica '" + r.id() + "': address is missing");
        }
        return r;
    }

    static ModelProfile profile(ModelProfile p) {
        if (p == null) {
            throw RegistryException.invalid("profile is missing (null)");
        }
        name("model", p.modelName());
        name("version", p.modelVersion());
        name("hardware", p.hardware());
        if (p.samples() < 1 || p.batches().isEmpty()) {
            throw RegistryException.invalid("profile of '" + p.key() + "' has no measurements");
        }
        int last = 0;
        for (ModelProfile.BatchLatency b : p.batches()) {
            if (b.batchSize() <= last || !(b.meanMs() >= 0) || !(b.p99Ms() >= 0)) {
                throw RegistryException.invalid("profile of '" + p.key() + "': batch sizes must increase and times be "
                        + ">= 0, got " + b);
            }
            last = b.batchSize();
        }
        return p;
    }

    static String replicaId(String id) {
        if (id == null || id.isBlank()) {
            throw RegistryException.invalid("replica id is missing or blank");
        }
        for (int i = 0; i < id.length(); i++) {
            if (Character.isISOControl(id.charAt(i))) {
                throw RegistryException.invalid("replica id contains a control character at position " + i);
            }
        }
        return id;
    }

    static String modelKey(String name, String version) {
        return name + ":" + version;
    }
}
