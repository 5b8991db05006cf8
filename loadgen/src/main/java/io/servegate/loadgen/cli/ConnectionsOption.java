package io.servegate.loadgen.cli;

import picocli.CommandLine.Option;

/**
 * How many HTTP connections a command's client opens to each server it loads at most (a picocli
 * mixin): one name for every command, each with its own default.
 */
public final class ConnectionsOption {

    @Option(names = "--max-connections", paramLabel = "N",
            description = "HTTP connections to each server loaded at most (default ${DEFAULT-VALUE}).")
    int max;

    ConnectionsOption(int defaultMax) {
        max = defaultMax;
    }

    /** The connections at most. */
    public int max() {
        return max;
    }
}
