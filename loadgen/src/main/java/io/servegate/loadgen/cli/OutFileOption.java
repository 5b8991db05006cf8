package io.servegate.loadgen.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The one file a command that makes no results folder writes (a picocli mixin); {@code --out}
 * is always a base directory.
 */
public final class OutFileOption {

    @Option(names = "--out-file", paramLabel = "FILE",
            description = "The file to write the results to; the command's description says what it holds.")
    Path file;

    /** The file, or null if none was given. */
    Path file() {
        return file;
    }
}
