package io.servegate.loadgen.cli;

import io.servegate.workload.arrival.ArrivalPattern;
import io.servegate.workload.arrival.RateTrace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** How every open-loop subcommand chooses its arrival process (a picocli mixin). */
public final class ArrivalOptions {

    /** The kinds of arrival process. */
    public enum Kind { poisson, gamma, trace }

    @Option(names = "--arrivals", defaultValue = "poisson",
            description = "Arrival process of open-loop load: poisson, gamma (gaps of squared coefficient of "
                    + "variation --cv2) or trace (rates per second from --trace) (default ${DEFAULT-VALUE}).")
    Kind kind = Kind.poisson;

    @Option(names = "--cv2", defaultValue = "1",
            description = "CV² of the gaps with --arrivals gamma: 1 is Poisson, >1 bursty, <1 regular "
                    + "(default ${DEFAULT-VALUE}).")
    double cv2 = 1;

    @Option(names = "--trace",
            description = "With --arrivals trace: a file with one rate (requests/s) per second, a bare number or "
                    + "CSV whose last field is the rate; # comments and a header line are skipped. Its shape is "
                    + "scaled to each run's mean rate unless --trace-as-is.")
    Path trace;

    @Option(names = "--trace-as-is", description = "Replay the trace's rates unscaled (the run's rate is ignored).")
    boolean traceAsIs;

    /** The process chosen; throws IllegalArgumentException on inconsistent options. */
    public ArrivalPattern process() {
        if (kind != Kind.trace && trace != null) {
            throw new IllegalArgumentException("--trace needs --arrivals trace");
        }
        return switch (kind) {
            case poisson -> ArrivalPattern.poisson();
            case gamma -> ArrivalPattern.gamma(cv2);
            case trace -> {
                if (trace == null) {
                    throw new IllegalArgumentException("--arrivals trace needs --trace FILE");
                }
                try {
                    yield ArrivalPattern.trace(RateTrace.read(trace, 1, null), traceAsIs);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }
}
