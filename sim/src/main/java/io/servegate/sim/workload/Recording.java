package io.servegate.sim.workload;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.core.trace.RunRecorder;
import io.servegate.sim.ModelSpec;
import io.servegate.sim.ReplicaSpec;
import io.servegate.sim.Scenario;
import io.servegate.sim.latency.EmpiricalLatency;
import io.servegate.sim.latency.ServiceProfile;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A live run recorded by {@link RunRecorder} (its Javadoc defines the format), read for replay:
 * the same arrivals with the same deadlines, offered to the same models and replicas, whose
 * latency is drawn from the service times the live batches took, per replica and batch size
 * ({@link EmpiricalLatency}).
 */
public final class Recording {

    private static final class ModelRecord {
        PolicyKind policy;
        long sloNanos;
        final Map<String, ReplicaRecord> replicas = new LinkedHashMap<>();
        final Map<Integer, List<Long>> pooled = new TreeMap<>();
    }

    private static final class ReplicaRecord {
        int concurrency = 1;
        long joinAt = Long.MIN_VALUE;
        long removedAt = Long.MAX_VALUE;
        final Map<Integer, List<Long>> samples = new TreeMap<>();
        final List<Long> overheads = new ArrayList<>();
    }

    private final String source;
    private final Map<String, ModelRecord> models = new LinkedHashMap<>();
    private final Map<String, Integer> modelIndex = new LinkedHashMap<>();
    private long[] times = new long[1024];
    private long[] deadlines = new long[1024];
    private int[] modelOf = new int[1024];
    private int arrivals;
    private long origin = Long.MAX_VALUE;

    private Recording(String source) {
        this.source = source;
    }

    /** Reads a recording. */
    public static Recording read(Path file) throws IOException {
        Recording r = new Recording(file.toString());
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                try {
                    r.parse(line.split(",", -1));
                } catch (RuntimeException e) {
                    throw new IOException(file + ":" + lineNo + ": " + e.getMessage() + ": " + line, e);
                }
            }
        }
        if (r.arrivals == 0) {
            throw new IOException(file + ": no arrivals");
        }
        return r;
    }

    private void parse(String[] f) {
        String name = RunRecorder.decode(f[1]);
        ModelRecord m = models.computeIfAbsent(name, k -> new ModelRecord());
        int model = modelIndex.computeIfAbsent(name, k -> modelIndex.size());
        switch (f[0]) {
            case "model" -> {
                need(f, 4);
                m.policy = PolicyKind.of(f[2]);
                m.sloNanos = Long.parseLong(f[3]);
            }
            case "replica" -> {
                need(f, 5);
                ReplicaRecord rr = replica(m, f[2]);
                rr.concurrency = Integer.parseInt(f[3]);
                rr.joinAt = seen(Long.parseLong(f[4]));
            }
            case "removed" -> {
                need(f, 4);
                replica(m, f[2]).removedAt = seen(Long.parseLong(f[3]));
            }
            case "arrival" -> {
                need(f, 4);
                if (arrivals == times.length) {
                    times = Arrays.copyOf(times, arrivals * 2);
                    deadlines = Arrays.copyOf(deadlines, arrivals * 2);
                    modelOf = Arrays.copyOf(modelOf, arrivals * 2);
                }
                times[arrivals] = seen(Long.parseLong(f[2]));
                deadlines[arrivals] = Long.parseLong(f[3]);
                modelOf[arrivals] = model;
                arrivals++;
            }
            case "batch" -> {
                need(f, 7);
                ReplicaRecord rr = replica(m, f[2]);
                seen(Long.parseLong(f[3]));
                int size = Integer.parseInt(f[4]);
                long service = Long.parseLong(f[5]);
                long roundTrip = Long.parseLong(f[6]);
                rr.samples.computeIfAbsent(size, k -> new ArrayList<>()).add(service);
                m.pooled.computeIfAbsent(size, k -> new ArrayList<>()).add(service);
                if (roundTrip >= service) {
                    rr.overheads.add(roundTrip - service);
                }
            }
            default -> throw new IllegalArgumentException("unknown record '" + f[0] + "'");
        }
    }

    private static void need(String[] f, int n) {
        if (f.length != n) {
            throw new IllegalArgumentException("expected " + n + " fields, got " + f.length);
        }
    }

    private static ReplicaRecord replica(ModelRecord m, String field) {
        return m.replicas.computeIfAbsent(RunRecorder.decode(field), k -> new ReplicaRecord());
    }

    private long seen(long t) {
        origin = Math.min(origin, t);
        return t;
    }

    /** Arrivals recorded. */
    public int arrivals() {
        return arrivals;
    }

    /**
     * The recording as a scenario. Times start at the earliest record; the duration is the span
     * of the arrivals. A replica without a {@code replica} record joins at the start with
     * concurrency 1; one without batches of its own draws from its model's. Its transport overhead
     * is the 10th percentile of its batches' round trip minus service time (the batches that did
     * not wait behind another at the container), unless {@code overheadMs} is given.
     *
     * @param policy     replay under this policy instead of the recorded one (null: as recorded)
     * @param overheadMs round-trip overhead for every replica, or null to estimate it per replica
     */
    public Scenario scenario(PolicyKind policy, Double overheadMs, long seed, int profileMax) {
        long[] order = sortedArrivalOrder();
        long firstArrival = times[(int) order[0]];
        long lastArrival = times[(int) order[order.length - 1]];
        List<ModelSpec> specs = new ArrayList<>();
        int index = 0;
        for (Map.Entry<String, ModelRecord> e : models.entrySet()) {
            ModelRecord m = e.getValue();
            PolicyKind p = policy != null ? policy : m.policy;
            if (p == null) {
                throw new IllegalArgumentException("model " + e.getKey() + " has no model record: give a policy");
            }
            long slo = m.sloNanos > 0 ? m.sloNanos : longestBudget(index);
            List<ReplicaSpec> replicas = new ArrayList<>();
            for (Map.Entry<String, ReplicaRecord> re : m.replicas.entrySet()) {
                ReplicaRecord rr = re.getValue();
                Map<Integer, List<Long>> samples = rr.samples.isEmpty() ? m.pooled : rr.samples;
                if (samples.isEmpty()) {
                    throw new IllegalArgumentException("model " + e.getKey() + " has no batch records to draw latency from");
                }
                long join = rr.joinAt == Long.MIN_VALUE || rr.joinAt <= firstArrival ? 0 : rr.joinAt - origin;
                long fail = rr.removedAt == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(join + 1, rr.removedAt - origin);
                long overhead = overheadMs != null ? Math.round(overheadMs * 1e6) : percentile10(rr.overheads);
                replicas.add(new ReplicaSpec(re.getKey(), rr.concurrency, new EmpiricalLatency(profile(samples)),
                        overhead, join, fail));
            }
            specs.add(new ModelSpec(e.getKey(), SchedulerConfig.of(p, slo), replicas));
            index++;
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("recording", source);
        settings.put("policy", policy == null ? "as recorded" : policy.id());
        settings.put("models", specs.size());
        settings.put("arrivals", arrivals);
        settings.put("overhead_ms", overheadMs == null ? "estimated per replica" : overheadMs);
        settings.put("profile_max", profileMax);
        settings.put("seed", seed);
        long o = origin;
        Workload workload = random -> new Workload.Stream() {
            private int next;

            @Override
            public boolean next(Workload.Arrival out) {
                if (next == order.length) {
                    return false;
                }
                int i = (int) order[next++];
                out.set(times[i] - o, modelOf[i], deadlines[i] - o);
                return true;
            }
        };
        return new Scenario(specs, workload, Math.max(1, lastArrival - o), seed, profileMax, settings);
    }

    /** Arrival indices by time (stable: ties keep file order). */
    private long[] sortedArrivalOrder() {
        Integer[] idx = new Integer[arrivals];
        for (int i = 0; i < arrivals; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (a, b) -> Long.compare(times[a], times[b]));
        return Arrays.stream(idx).mapToLong(Integer::longValue).toArray();
    }

    private long longestBudget(int model) {
        long slo = 1;
        for (int i = 0; i < arrivals; i++) {
            if (modelOf[i] == model) {
                slo = Math.max(slo, deadlines[i] - times[i]);
            }
        }
        return slo;
    }

    private static long percentile10(List<Long> values) {
        if (values.isEmpty()) {
            return 0;
        }
        long[] v = values.stream().mapToLong(Long::longValue).sorted().toArray();
        return v[v.length / 10];
    }

    private static ServiceProfile profile(Map<Integer, List<Long>> samples) {
        Map<Integer, long[]> m = new TreeMap<>();
        samples.forEach((size, list) -> m.put(size, list.stream().mapToLong(Long::longValue).toArray()));
        return new ServiceProfile(m);
    }
}
