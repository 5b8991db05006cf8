package io.servegate.loadgen.cli;

import picocli.CommandLine.Option;

/**
 * The cost of a batch on the emulated container a command starts (a picocli mixin): a batch of b
 * inputs takes β + α·b ms; one name for each for every command, each with its own defaults.
 */
public final class BatchCostOption {

    @Option(names = "--beta-ms",
            description = "The emulated container's fixed cost per batch in ms (default ${DEFAULT-VALUE}).")
    double betaMs;

    @Option(names = "--alpha-ms",
            description = "The emulated container's cost per input in ms (default ${DEFAULT-VALUE}).")
    double alphaMs;

    BatchCostOption(double defaultBetaMs, double defaultAlphaMs) {
        betaMs = defaultBetaMs;
        alphaMs = defaultAlphaMs;
    }

    /** β: the fixed cost of a batch, in milliseconds. */
    public double betaMs() {
        return betaMs;
    }

    /** α: the cost of each input of a batch, in milliseconds. */
    public double alphaMs() {
        return alphaMs;
    }
}
