package io.servegate.loadgen.cli;

import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The measured seconds of a command's run, leg or case (a picocli mixin): one name for every
 * command, each with its own default.
 */
public final class DurationOption {

    @Option(names = "--duration-s", paramLabel = "SECONDS",
            description = "Measured seconds of each run, leg or case (default ${DEFAULT-VALUE}).")
    double seconds;

    DurationOption(double defaultSeconds) {
        seconds = defaultSeconds;
    }

    /** The measured seconds. */
    public double seconds() {
        return seconds;
    }

    /** The measured time, to the nanosecond. */
    public Duration duration() {
        return GatewayOverheadCommand.seconds(seconds);
    }
}
