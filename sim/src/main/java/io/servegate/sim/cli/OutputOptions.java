package io.servegate.sim.cli;

import io.servegate.sim.report.Summary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where a command writes: a JSON summary, and/or a folder with the HTML page, its PNG and the JSON. */
final class OutputOptions {

    @Option(names = "--json", description = "write the JSON summary to this file")
    Path json;

    @Option(names = "--out", description = "write <name>.html, <name>.png and <name>.json into this folder")
    Path out;

    /** Writes the JSON where asked; returns the report folder, or null when none was asked for. */
    Path write(String name, Map<String, Object> summary) throws IOException {
        if (json != null) {
            Summary.write(summary, json);
        }
        if (out == null) {
            return null;
        }
        Files.createDirectories(out);
        Summary.write(summary, out.resolve(name + ".json"));
        return out;
    }
}
