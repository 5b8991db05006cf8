package io.servegate.loadgen.cli;

import io.servegate.loadgen.report.ResultsFolder;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Where a command writes its results (a picocli mixin): a new folder per run under one base directory. */
public final class ResultsOption {

    @Option(names = "--out", defaultValue = "bench/results", paramLabel = "DIR",
            description = "Base directory; each run writes its report and logs to a new folder "
                    + "<out>/<benchmark>-<UTC timestamp>/ (default ${DEFAULT-VALUE}).")
    Path base;

    /** Creates the run's folder, {@code <out>/<benchmark>-<UTC timestamp>/}. */
    Path create(String benchmark) throws IOException {
        return ResultsFolder.create(base, benchmark);
    }
}
