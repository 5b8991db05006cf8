package io.servegate.loadgen.cli;

import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * A command's per-request timeout, which is also how long an open loop waits for answers after
 * its last request (a picocli mixin): one name for every command, each with its own default.
 */
public final class TimeoutOption {

    @Option(names = "--timeout-ms", paramLabel = "MS",
            description = "Per-request timeout (a gRPC call's deadline), and how long to wait for answers after the "
                    + "last request (default ${DEFAULT-VALUE}).")
    long ms;

    TimeoutOption(long defaultMs) {
        ms = defaultMs;
    }

    /** The timeout. */
    public Duration duration() {
        return Duration.ofMillis(ms);
    }
}
