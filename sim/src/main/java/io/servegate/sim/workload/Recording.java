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
    }

    private static final class ReplicaRecord {
        int concurrency = 1;
        long joinAt = Long.MIN_VALUE;
        long removedAt = Long.MAX_VALUE;
        final List<BatchRecord> batches = new ArrayList<>();
    }

    private record BatchRecord(long sentAt, int size, long service, long roundTrip) {
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
                replica(m, f[2]).batches.add(new BatchRecord(seen(Long.parseLong(f[3])), Integer.parseInt(f[4]),
                        Long.parseLong(f[5]), Long.parseLong(f[6])));
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

    /** When the first query arrived, on the recording's clock. */
    public long firstArrivalNanos() {
        long first = Long.MAX_VALUE;
        for (int i = 0; i < arrivals; i++) {
            first = Math.min(first, times[i]);
        }
        return first;
    }

    /** The recording as a scenario, all of it counted: {@link #scenario(PolicyKind, Double, long, int, long)} without a lead-in. */
    public Scenario scenario(PolicyKind policy, Double overheadMs, long seed, int profileMax) {
        return scenario(policy, overheadMs, seed, profileMax, Long.MIN_VALUE);
    }

    /**
     * The recording as a scenario. Times start at the earliest record; the duration is the span
     * of the arrivals. A replica without a {@code replica} record joins at the start with
     * concurrency 1; one without batches of its own draws from its model's. Its transport overhead
     * is the 10th percentile of its batches' round trip minus service time (the batches that did
     * not wait behind another at the container), unless {@code overheadMs} is given.
     *
     * <p>What was recorded before {@code measureFrom} (a live run's warm-up) is replayed as the
     * scenario's lead-in, uncounted ({@link Scenario#measureFromNanos}): the replayed schedulers
     * enter the measured part with an arrival rate and profiles as warm as the live ones were. The
     * latency model draws from the batches of the measured part only, where there are any, since a
     * warm-up's batches pay one-off costs.
     *
     * @param policy      replay under this policy instead of the recorded one (null: as recorded)
     * @param overheadMs  round-trip overhead for every replica, or null to estimate it per replica
     * @param measureFrom on the recording's clock, where the counted part starts; at or before the
     *                    earliest record, everything counts
     */
    public Scenario scenario(PolicyKind policy, Double overheadMs, long seed, int profileMax, long measureFrom) {
        long[] order = sortedArrivalOrder();
        long firstArrival = times[(int) order[0]];
        long lastArrival = times[(int) order[order.length - 1]];
        if (measureFrom >= lastArrival) {
            throw new IllegalArgumentException("nothing arrives after the lead-in: the last arrival is "
                    + (lastArrival - firstArrival) / 1_000_000 + " ms after the first");
        }
        long o = origin;
        long leadIn = measureFrom <= o ? 0 : measureFrom - o;
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
            List<BatchRecord> pooled = measured(m.replicas.values().stream().flatMap(r -> r.batches.stream()).toList(),
                    measureFrom);
            for (Map.Entry<String, ReplicaRecord> re : m.replicas.entrySet()) {
                ReplicaRecord rr = re.getValue();
                List<BatchRecord> own = measured(rr.batches, measureFrom);
                Map<Integer, List<Long>> samples = samples(own.isEmpty() ? pooled : own);
                if (samples.isEmpty()) {
                    throw new IllegalArgumentException("model " + e.getKey() + " has no batch records to draw latency from");
                }
                long join = rr.joinAt == Long.MIN_VALUE || rr.joinAt <= firstArrival ? 0 : rr.joinAt - origin;
                long fail = rr.removedAt == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(join + 1, rr.removedAt - origin);
                long overhead = overheadMs != null ? Math.round(overheadMs * 1e6) : percentile10(own);
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
        if (leadIn > 0) {
            settings.put("lead_in_s", leadIn / 1e9);
        }
        settings.put("profile_max", profileMax);
        settings.put("seed", seed);
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
        return new Scenario(specs, workload, Math.max(1, lastArrival - o), seed, profileMax, settings, leadIn);
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

    /** The batches sent from {@code from} on, or all of them when none was. */
    private static List<BatchRecord> measured(List<BatchRecord> batches, long from) {
        List<BatchRecord> kept = batches.stream().filter(b -> b.sentAt() >= from).toList();
        return kept.isEmpty() ? batches : kept;
    }

    private static Map<Integer, List<Long>> samples(List<BatchRecord> batches) {
        Map<Integer, List<Long>> samples = new TreeMap<>();
        for (BatchRecord b : batches) {
            samples.computeIfAbsent(b.size(), k -> new ArrayList<>()).add(b.service());
        }
        return samples;
    }

    /** The 10th percentile of the batches' round trip less service time, over those whose round trip is known. */
    private static long percentile10(List<BatchRecord> batches) {
        long[] v = batches.stream().filter(b -> b.roundTrip() >= b.service())
                .mapToLong(b -> b.roundTrip() - b.service()).sorted().toArray();
        return v.length == 0 ? 0 : v[v.length / 10];
    }

    private static ServiceProfile profile(Map<Integer, List<Long>> samples) {
        Map<Integer, long[]> m = new TreeMap<>();
        samples.forEach((size, list) -> m.put(size, list.stream().mapToLong(Long::longValue).toArray()));
        return new ServiceProfile(m);
    }
}
