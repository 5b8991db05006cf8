package io.servegate.sim.cli;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.latency.EmpiricalLatency;
import io.servegate.sim.latency.ServiceProfile;
import io.servegate.workload.arrival.RateTrace;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The scenario options that {@code sim} and {@code sim sweep} share. */
public final class SimOptions {

    @Option(names = "--policy", defaultValue = "symphony", description = "clipper, clockwork, symphony or adaptive (default: ${DEFAULT-VALUE})")
    String policy;

    @Option(names = "--replicas", defaultValue = "1", description = "replicas per model (default: ${DEFAULT-VALUE})")
    int replicas;

    @Option(names = "--concurrency", defaultValue = "1", description = "batches a replica runs at once (default: ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--beta-ms", defaultValue = "5", description = "fixed cost of a batch, β (default: ${DEFAULT-VALUE})")
    double betaMs;

    @Option(names = "--alpha-ms", defaultValue = "0.5", description = "cost per query, α (default: ${DEFAULT-VALUE})")
    double alphaMs;

    @Option(names = "--noise-sigma", defaultValue = "0", description = "lognormal noise on β + α·b, log-scale deviation (default: ${DEFAULT-VALUE}: exact)")
    double noiseSigma;

    @Option(names = "--cold-batch-ms", defaultValue = "0", description = "extra cost of each replica's first batch of each size, as an accelerator that autotunes new shapes (default: ${DEFAULT-VALUE})")
    double coldBatchMs;

    @Option(names = "--stall-ms", defaultValue = "0", description = "every replica stands still this long every --stall-every-ms; batches running or starting then wait (default: ${DEFAULT-VALUE}: never)")
    double stallMs;

    @Option(names = "--stall-every-ms", defaultValue = "5000", description = "period of the stalls, the first one this long into the run (default: ${DEFAULT-VALUE})")
    double stallEveryMs;

    @Option(names = "--profile", description = "measured service times per batch size (CSV batch_size,service_ns) instead of β + α·b")
    Path profile;

    @Option(names = "--overhead-ms", defaultValue = "0", description = "round-trip transport overhead per batch, half each way (default: ${DEFAULT-VALUE})")
    double overheadMs;

    @Option(names = "--overhead-sigma", defaultValue = "0", description = "each batch's overhead times lognormal noise exp(σZ − σ²/2), mean 1: a shared machine's round trips (default: ${DEFAULT-VALUE}: constant)")
    double overheadSigma;

    @Option(names = "--slo-ms", defaultValue = "20", split = ",", description = "SLO; a list gives model i the i-th (cycling) (default: ${DEFAULT-VALUE})")
    double[] sloMs;

    @Option(names = "--rate", defaultValue = "1000", description = "mean total arrival rate, queries/s (default: ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--arrivals", defaultValue = "poisson", description = "poisson, gamma, uniform, onoff or trace (default: ${DEFAULT-VALUE})")
    String arrivals;

    @Option(names = "--cv2", defaultValue = "4", description = "squared coefficient of variation of Gamma gaps (default: ${DEFAULT-VALUE})")
    double cv2;

    @Option(names = "--on-s", defaultValue = "1", description = "on/off arrivals: seconds on (default: ${DEFAULT-VALUE})")
    double onS;

    @Option(names = "--off-s", defaultValue = "1", description = "on/off arrivals: seconds off (default: ${DEFAULT-VALUE})")
    double offS;

    @Option(names = "--trace", description = "rate trace: counts per interval, or the Azure Functions per-minute layout")
    Path trace;

    @Option(names = "--trace-bin-s", defaultValue = "1", description = "interval of a counts-per-interval trace, s: 1 per-second, 60 per-minute (default: ${DEFAULT-VALUE})")
    double traceBinS;

    @Option(names = "--trace-function", description = "Azure layout: take this HashFunction's row only (default: all rows summed)")
    String traceFunction;

    @Option(names = "--duration-s", description = "seconds of arrivals (default: 10, or the trace's length)")
    Double durationS;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--models", defaultValue = "1", description = "number of models (default: ${DEFAULT-VALUE})")
    int models;

    @Option(names = "--zipf", defaultValue = "1", description = "Zipf exponent of the models' popularity (default: ${DEFAULT-VALUE})")
    double zipf;

    @Option(names = "--coordination", defaultValue = "central", description = "central: one scheduler per model over its replicas; none: each replica its own scheduler and an equal share, dealt in turn (default: ${DEFAULT-VALUE})")
    String coordination;

    @Option(names = "--batch-size", defaultValue = "-1", description = "fixed batch size for clipper (default: adaptive)")
    int batchSize;

    @Option(names = "--max-batch", defaultValue = "256", description = "batch ceiling of every policy (default: ${DEFAULT-VALUE})")
    int maxBatch;

    @Option(names = "--profile-max", defaultValue = "64", description = "profiling pass at registration: sizes 1, 2, 4, … up to this; 0 for none (default: ${DEFAULT-VALUE})")
    int profileMax;

    @Option(names = "--fail", description = "REPLICA@SECONDS: that replica dies then (repeatable; ids r0, r1, … or m0/r0 with several models)")
    List<String> fail = new ArrayList<>();

    /** A builder for these options. */
    ScenarioBuilder builder() throws IOException {
        ScenarioBuilder b = new ScenarioBuilder().policy(PolicyKind.of(policy)).replicas(replicas)
                .concurrency(concurrency).linear(betaMs, alphaMs, noiseSigma).overheadMs(overheadMs).overheadSigma(overheadSigma).sloMs(sloMs)
                .rate(rate).cv2(cv2).onOff(onS, offS).seed(seed).models(models, zipf)
                .batchSizes(batchSize, maxBatch).profileMax(profileMax).independent(independent())
                .arrivals(ScenarioBuilder.Arrivals.valueOf(arrivals.trim().toUpperCase(java.util.Locale.ROOT)));
        double duration = durationS != null ? durationS : 10;
        if (profile != null) {
            b.latency(new EmpiricalLatency(ServiceProfile.read(profile)));
        }
        if (coldBatchMs > 0) {
            b.coldBatchMs(coldBatchMs);
        }
        b.stalls(stallMs, stallEveryMs);
        if (trace != null) {
            RateTrace t = RateTrace.read(trace, traceBinS, traceFunction);
            b.trace(t);
            if (durationS == null) {
                duration = t.durationNanos() / 1e9;
            }
        }
        b.durationS(duration);
        for (String f : fail) {
            int at = f.lastIndexOf('@');
            if (at <= 0) {
                throw new IllegalArgumentException("--fail wants REPLICA@SECONDS, got " + f);
            }
            b.fail(f.substring(0, at), Double.parseDouble(f.substring(at + 1)));
        }
        return b;
    }

    private boolean independent() {
        return switch (coordination.trim()) {
            case "central" -> false;
            case "none" -> true;
            default -> throw new IllegalArgumentException("--coordination is central or none, got " + coordination);
        };
    }
}
