package io.servegate.loadgen.cli;

import picocli.CommandLine.Option;

/** The latency SLO of a command's app or load (a picocli mixin): one name for every command, 20 ms unless it says. */
public final class SloOption {

    @Option(names = "--slo-ms",
            description = "The latency SLO in ms: goodput counts predictions answered within it (default ${DEFAULT-VALUE}).")
    double sloMs;

    public SloOption() {
        this(20);
    }

    SloOption(double defaultMs) {
        sloMs = defaultMs;
    }

    /** The SLO in milliseconds. */
    public double ms() {
        return sloMs;
    }

    /** The SLO in nanoseconds. */
    public long nanos() {
        return Math.round(sloMs * 1e6);
    }
}
