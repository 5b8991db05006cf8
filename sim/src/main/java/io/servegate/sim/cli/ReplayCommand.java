package io.servegate.sim.cli;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.report.Summary;
import io.servegate.sim.workload.Recording;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code bin/sim replay FILE}: replays a recorded live run (see {@link Recording}) and reports the same metrics. */
@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Replays a recording of a live run (io.servegate.core.trace.RunRecorder's format).")
final class ReplayCommand implements Callable<Integer> {

    @Parameters(index = "0", description = "the recording")
    Path file;

    @Option(names = "--policy", description = "replay under this policy (default: the recorded one)")
    String policy;

    @Option(names = "--overhead-ms", description = "round-trip transport overhead for every replica (default: estimated from the recording)")
    Double overheadMs;

    @Option(names = "--lead-in-s", defaultValue = "0", description = "replay the first SECONDS after the first arrival "
            + "uncounted, as a warm-up that the schedulers enter the counted part warm from (default: ${DEFAULT-VALUE})")
    double leadInS;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the latency draws (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--profile-max", defaultValue = "64", description = "profiling pass at registration up to this size; 0 for none (default: ${DEFAULT-VALUE})")
    int profileMax;

    @Mixin
    OutputOptions output;

    @Override
    public Integer call() throws Exception {
        Recording recording = Recording.read(file);
        if (!(leadInS >= 0)) {
            throw new IllegalArgumentException("--lead-in-s must be >= 0");
        }
        SimResult r = Simulation.run(recording.scenario(policy == null ? null : PolicyKind.of(policy), overheadMs, seed,
                profileMax, leadInS == 0 ? Long.MIN_VALUE : recording.firstArrivalNanos() + Math.round(leadInS * 1e9)));
        System.out.println(Summary.line(r));
        SimCommand.report("replay", "Replayed run", r, output);
        return 0;
    }
}
