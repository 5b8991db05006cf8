package io.servegate.sim;

import io.servegate.sim.workload.ModelChooser;
import io.servegate.sim.workload.Workload;
import io.servegate.workload.arrival.ArrivalProcess;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A many-model run: {@code models} model versions with Zipf popularity share {@code replicas}
 * multi-model replicas. Model i (0 = the most popular) has a size drawn uniformly from
 * [{@code sizeMinMb}, {@code sizeMaxMb}] and loads at {@code loadGbPerS}; every replica's memory
 * budget is the total size of the {@code residentModels} most popular models, so the static
 * placement holds exactly those and the on-demand one has the same bytes. Every model's batch of b
 * takes β + α·b; arrivals are Poisson at {@code rate}, each due {@code sloMs} later.
 */
public record ManyModelScenario(ModelPlacement placement, int models, double zipf, int replicas,
        int residentModels, double sizeMinMb, double sizeMaxMb, double loadGbPerS, double betaMs, double alphaMs,
        double overheadMs, double sloMs, double rate, double durationS, long seed) {

    public ManyModelScenario {
        if (models < 1 || replicas < 1 || residentModels < 1 || residentModels > models) {
            throw new IllegalArgumentException("need models >= 1, replicas >= 1 and 1 <= resident models <= models");
        }
        if (!(sizeMinMb > 0) || sizeMaxMb < sizeMinMb || !(loadGbPerS > 0) || !(sloMs > 0) || !(rate > 0)
                || !(durationS > 0) || overheadMs < 0) {
            throw new IllegalArgumentException("need 0 < size min <= size max, and positive load speed, SLO, rate "
                    + "and duration");
        }
    }

    /** This scenario with another placement. */
    public ManyModelScenario withPlacement(ModelPlacement p) {
        return new ManyModelScenario(p, models, zipf, replicas, residentModels, sizeMinMb, sizeMaxMb, loadGbPerS,
                betaMs, alphaMs, overheadMs, sloMs, rate, durationS, seed);
    }

    /** This scenario at another arrival rate. */
    public ManyModelScenario withRate(double r) {
        return new ManyModelScenario(placement, models, zipf, replicas, residentModels, sizeMinMb, sizeMaxMb,
                loadGbPerS, betaMs, alphaMs, overheadMs, sloMs, r, durationS, seed);
    }

    /** The name of model {@code i} (0 = the most popular). */
    static String id(int i) {
        return "m" + i;
    }

    /** What arrives: Poisson at {@code rate}, model i with Zipf probability, each due {@code sloMs} later. */
    Workload workload() {
        double[] weights = ModelChooser.zipf(models, zipf);
        long[] slos = new long[models];
        java.util.Arrays.fill(slos, Math.round(sloMs * 1e6));
        return Workload.generated(() -> ArrivalProcess.poisson(rate), () -> ModelChooser.weighted(weights), slos,
                Math.round(durationS * 1e9));
    }

    /** Each model's size in bytes, drawn from {@code random}, model 0 first. */
    long[] sizes(SplittableRandom random) {
        long[] sizes = new long[models];
        for (int i = 0; i < models; i++) {
            sizes[i] = Math.round((sizeMinMb + random.nextDouble() * (sizeMaxMb - sizeMinMb)) * 1e6);
        }
        return sizes;
    }

    /** The time to load {@code bytes}, in nanoseconds. */
    long loadNanos(long bytes) {
        return Math.round(bytes / loadGbPerS);
    }

    /** What the run was asked for, as the reports print it. */
    public Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("models", models);
        s.put("zipf", zipf);
        s.put("replicas", replicas);
        s.put("budget_models", residentModels);
        s.put("size_mb", sizeMinMb + "-" + sizeMaxMb);
        s.put("load_gb_per_s", loadGbPerS);
        s.put("beta_ms", betaMs);
        s.put("alpha_ms", alphaMs);
        s.put("overhead_ms", overheadMs);
        s.put("slo_ms", sloMs);
        s.put("arrivals", "poisson");
        s.put("duration_s", durationS);
        s.put("seed", seed);
        return s;
    }
}
