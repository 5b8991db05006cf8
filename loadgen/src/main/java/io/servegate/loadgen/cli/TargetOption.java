package io.servegate.loadgen.cli;

import picocli.CommandLine.Option;

/** A running model container that a command loads directly, not through a gateway (a picocli mixin). */
public final class TargetOption {

    @Option(names = "--target", paramLabel = "HOST:PORT", description = "A running container's gRPC address.")
    String address;

    /** The address, or null if none was given. */
    String address() {
        return address;
    }
}
