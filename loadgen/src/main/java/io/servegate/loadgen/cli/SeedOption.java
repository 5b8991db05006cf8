package io.servegate.loadgen.cli;

import picocli.CommandLine.Option;

/**
 * The seed of a command's arrival schedules (a picocli mixin): with the same seed, a live run and
 * a simulated one offer the same arrivals (see {@code ArrivalSchedule}).
 */
public final class SeedOption {

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the arrival schedules (default ${DEFAULT-VALUE}).")
    long seed;

    public long seed() {
        return seed;
    }
}
