package io.servegate.loadgen.cli;

import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The unmeasured seconds of load before a command measures (a picocli mixin): one name for every
 * command, each with its own default.
 */
public final class WarmupOption {

    @Option(names = "--warmup-s", paramLabel = "SECONDS",
            description = "Unmeasured seconds of load before measuring; 0 measures from the first query "
                    + "(default ${DEFAULT-VALUE}).")
    double seconds;

    WarmupOption(double defaultSeconds) {
        seconds = defaultSeconds;
    }

    /** The unmeasured seconds. */
    public double seconds() {
        return seconds;
    }

    /** The unmeasured time, to the nanosecond. */
    public Duration duration() {
        return GatewayOverheadCommand.seconds(seconds);
    }
}
