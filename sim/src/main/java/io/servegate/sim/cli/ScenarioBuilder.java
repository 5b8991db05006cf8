package io.servegate.sim.cli;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.sim.Autoscaling;
import io.servegate.sim.ModelSpec;
import io.servegate.sim.ReplicaSpec;
import io.servegate.sim.Scenario;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.ColdShapeLatency;
import io.servegate.sim.latency.LinearLatency;
import io.servegate.sim.latency.StallingLatency;
import io.servegate.sim.report.Analytic;
import io.servegate.sim.workload.ModelChooser;
import io.servegate.sim.workload.Workload;
import io.servegate.workload.arrival.ArrivalProcess;
import io.servegate.workload.arrival.RateTrace;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Builds the usual scenarios from a few numbers, as the command line gives them: one or more
 * models (Zipf popularity, per-model SLOs), each on its own replicas with β + α·b latency (or a
 * measured profile), under one arrival process.
 *
 * <p>{@link #independent(boolean) Independent} replicas model a system without coordination
 * (Nexus-style frontends, Symphony §4.2): each replica has its own scheduler and an equal share
 * of the traffic, dealt in turn, instead of one scheduler over all replicas.
 */
public final class ScenarioBuilder {

    /** The arrival processes the command line offers. */
    public enum Arrivals {
        POISSON, GAMMA, UNIFORM, ONOFF, TRACE;

        /** Lower-case name, as the command line spells it. */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static final long MS = 1_000_000L;

    private PolicyKind policy = PolicyKind.SYMPHONY;
    private int replicas = 1;
    private int concurrency = 1;
    private double betaMs = 5;
    private double alphaMs = 0.5;
    private double noiseSigma;
    private LatencyModel latency;
    private double coldBatchMs;
    private double stallMs;
    private double stallEveryMs = 5_000;
    private double overheadMs;
    private double overheadSigma;
    private double[] sloMs = {20};
    private double rate = 1_000;
    private Arrivals arrivals = Arrivals.POISSON;
    private double cv2 = 4;
    private double onS = 1;
    private double offS = 1;
    private RateTrace trace;
    private double durationS = 10;
    private long seed = 1;
    private int models = 1;
    private double zipf = 1;
    private boolean independent;
    private int fixedBatch = -1;
    private int maxBatch = SchedulerConfig.DEFAULT_MAX_BATCH_SIZE;
    private int profileMax = 64;
    private final Map<String, Double> failures = new LinkedHashMap<>();
    private Autoscaling autoscaling;

    public ScenarioBuilder policy(PolicyKind p) {
        policy = p;
        return this;
    }

    /** Each model's autoscaler (null: none); {@link #replicas} are then the replicas it starts with. */
    public ScenarioBuilder autoscaling(Autoscaling a) {
        autoscaling = a;
        return this;
    }

    /** Replicas per model (with {@link #independent}: the number of independent replicas). */
    public ScenarioBuilder replicas(int n) {
        replicas = n;
        return this;
    }

    public ScenarioBuilder concurrency(int c) {
        concurrency = c;
        return this;
    }

    /** β + α·b in milliseconds, with lognormal noise of log-scale deviation {@code sigma} (0: exact). */
    public ScenarioBuilder linear(double beta, double alpha, double sigma) {
        betaMs = beta;
        alphaMs = alpha;
        noiseSigma = sigma;
        latency = null;
        return this;
    }

    /** Every replica's latency from this model instead (e.g. a measured {@link ServiceProfile}). */
    public ScenarioBuilder latency(LatencyModel model) {
        latency = model;
        return this;
    }

    /** Each replica's first batch of each size costs this much more, ms ({@link ColdShapeLatency}). */
    public ScenarioBuilder coldBatchMs(double ms) {
        coldBatchMs = ms;
        return this;
    }

    /** Every replica stands still {@code ms} every {@code everyMs} ({@link StallingLatency}); 0 ms: never. */
    public ScenarioBuilder stalls(double ms, double everyMs) {
        stallMs = ms;
        stallEveryMs = everyMs;
        return this;
    }

    /** Round-trip transport overhead per batch, ms (half each way). */
    public ScenarioBuilder overheadMs(double ms) {
        overheadMs = ms;
        return this;
    }

    /** Each batch's overhead times lognormal noise of this log-scale deviation, mean 1 (0: constant). */
    public ScenarioBuilder overheadSigma(double sigma) {
        overheadSigma = sigma;
        return this;
    }

    /** SLOs in ms; model i gets {@code slo[i % length]}. */
    public ScenarioBuilder sloMs(double... slo) {
        sloMs = slo.clone();
        return this;
    }

    /** The mean total arrival rate, queries per second (a trace is scaled to it). */
    public ScenarioBuilder rate(double r) {
        rate = r;
        return this;
    }

    public ScenarioBuilder arrivals(Arrivals a) {
        arrivals = a;
        return this;
    }

    public ScenarioBuilder cv2(double v) {
        cv2 = v;
        return this;
    }

    public ScenarioBuilder onOff(double on, double off) {
        onS = on;
        offS = off;
        return this;
    }

    /** A rate trace; also sets the arrivals to {@link Arrivals#TRACE}. */
    public ScenarioBuilder trace(RateTrace t) {
        trace = t;
        arrivals = Arrivals.TRACE;
        return this;
    }

    public ScenarioBuilder durationS(double s) {
        durationS = s;
        return this;
    }

    public ScenarioBuilder seed(long s) {
        seed = s;
        return this;
    }

    /** {@code n} models whose popularity follows Zipf with exponent {@code s}. */
    public ScenarioBuilder models(int n, double s) {
        models = n;
        zipf = s;
        return this;
    }

    /** Independent replicas, no coordination (see the class comment). */
    public ScenarioBuilder independent(boolean yes) {
        independent = yes;
        return this;
    }

    /** A fixed batch size for Clipper ({@code <= 0}: adaptive) and the batch ceiling of every policy. */
    public ScenarioBuilder batchSizes(int fixed, int max) {
        fixedBatch = fixed;
        maxBatch = max;
        return this;
    }

    /** The profiling pass at registration measures sizes 1, 2, 4, … up to {@code max} (0: none). */
    public ScenarioBuilder profileMax(int max) {
        profileMax = max;
        return this;
    }

    /** Replica {@code id} dies {@code atS} seconds into the run. */
    public ScenarioBuilder fail(String id, double atS) {
        failures.put(id, atS);
        return this;
    }

    /** The single-replica analytic optimum of issue 12 at rate {@code λ} (see {@link Analytic}). */
    public double analyticOneReplicaOptimum(double lambda) {
        return Analytic.oneReplicaGoodput(lambda, sloMs[0], betaMs, alphaMs, maxBatch);
    }

    public double rate() {
        return rate;
    }

    public Scenario build() {
        if (models < 1 || replicas < 1 || (independent && models != 1)) {
            throw new IllegalArgumentException("need >= 1 model and replica; independent replicas serve one model");
        }
        long durationNanos = Math.round(durationS * 1e9);
        LatencyModel model = latency != null ? latency
                : new LinearLatency(Math.round(betaMs * MS), Math.round(alphaMs * MS), noiseSigma);
        if (coldBatchMs > 0) {
            model = new ColdShapeLatency(model, Math.round(coldBatchMs * MS));
        }
        if (stallMs > 0) {
            model = new StallingLatency(model, Math.round(stallEveryMs * MS), Math.round(stallMs * MS));
        }
        long overhead = Math.round(overheadMs * MS);
        List<ModelSpec> specs = new ArrayList<>();
        int groups = independent ? replicas : models;
        long[] slo = new long[groups];
        for (int m = 0; m < groups; m++) {
            slo[m] = Math.round(sloMs[independent ? 0 : m % sloMs.length] * MS);
            SchedulerConfig config = SchedulerConfig.of(policy, slo[m]).withBatchSizes(maxBatch, fixedBatch);
            List<ReplicaSpec> rs = new ArrayList<>();
            int perGroup = independent ? 1 : replicas;
            for (int i = 0; i < perGroup; i++) {
                String id = independent ? "r" + m : models == 1 ? "r" + i : "m" + m + "/r" + i;
                ReplicaSpec r = ReplicaSpec.of(id, concurrency, model.forReplica(), overhead)
                        .withOverheadSigma(overheadSigma);
                Double failAt = failures.get(id);
                rs.add(failAt == null ? r : r.failingAt(Math.round(failAt * 1e9)));
            }
            specs.add(new ModelSpec(independent ? "r" + m : models == 1 ? "model" : "m" + m, config, rs, autoscaling));
        }
        List<String> ids = specs.stream().flatMap(s -> s.replicas().stream()).map(ReplicaSpec::id).toList();
        for (String f : failures.keySet()) {
            if (!ids.contains(f)) {
                throw new IllegalArgumentException("no replica '" + f + "' to fail; replicas are " + ids);
            }
        }
        int n = groups;
        double[] weights = ModelChooser.zipf(models, zipf);
        Supplier<ModelChooser> chooser = independent ? () -> ModelChooser.roundRobin(n)
                : () -> ModelChooser.weighted(weights);
        Workload workload = Workload.generated(process(), chooser, slo, durationNanos);
        return new Scenario(specs, workload, durationNanos, seed, profileMax, settings());
    }

    private Supplier<ArrivalProcess> process() {
        return switch (arrivals) {
            case POISSON -> () -> ArrivalProcess.poisson(rate);
            case GAMMA -> () -> ArrivalProcess.gamma(rate, cv2);
            case UNIFORM -> () -> ArrivalProcess.uniform(rate);
            case ONOFF -> () -> ArrivalProcess.onOff(rate, Math.round(onS * 1e9), Math.round(offS * 1e9));
            case TRACE -> {
                if (trace == null) {
                    throw new IllegalArgumentException("trace arrivals need a trace file");
                }
                RateTrace scaled = trace.scaledToMean(rate);
                yield scaled::arrivals;
            }
        };
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("policy", policy.id());
        s.put("coordination", independent ? "none (independent replicas)" : "one scheduler per model");
        s.put("models", models);
        if (models > 1) {
            s.put("zipf", zipf);
        }
        s.put("replicas", replicas);
        s.put("concurrency", concurrency);
        if (latency != null) {
            s.put("latency", "measured profile");
        } else {
            s.put("beta_ms", betaMs);
            s.put("alpha_ms", alphaMs);
            s.put("noise_sigma", noiseSigma);
        }
        if (coldBatchMs > 0) {
            s.put("cold_batch_ms", coldBatchMs);
        }
        if (stallMs > 0) {
            s.put("stall_ms", stallMs);
            s.put("stall_every_ms", stallEveryMs);
        }
        s.put("overhead_ms", overheadMs);
        if (overheadSigma > 0) {
            s.put("overhead_sigma", overheadSigma);
        }
        s.put("slo_ms", sloMs.length == 1 ? (Object) sloMs[0] : java.util.Arrays.toString(sloMs));
        s.put("rate", rate);
        s.put("arrivals", arrivals.id());
        if (arrivals == Arrivals.GAMMA) {
            s.put("cv2", cv2);
        }
        if (arrivals == Arrivals.ONOFF) {
            s.put("on_s", onS);
            s.put("off_s", offS);
        }
        if (arrivals == Arrivals.TRACE && trace != null) {
            s.put("trace", trace.source());
        }
        s.put("fixed_batch", fixedBatch);
        s.put("max_batch", maxBatch);
        s.put("profile_max", profileMax);
        if (!failures.isEmpty()) {
            s.put("failures_s", failures);
        }
        if (autoscaling != null) {
            var c = autoscaling.config();
            s.put("autoscaling", c.policy().id() + ", replicas " + c.minReplicas() + ".." + c.maxReplicas()
                    + ", utilisation " + c.utilisation() + ", bad rate " + c.badRateThreshold() + ", idle "
                    + c.idleThreshold() + ", cooldown " + c.cooldownNanos() / 1e9 + " s, start "
                    + autoscaling.startNanos() / 1e9 + " s");
        }
        s.put("duration_s", durationS);
        s.put("seed", seed);
        return s;
    }
}
