package io.servegate.loadgen.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/** Where one scenario run writes its files: {@code <base>/<scenario>-<UTC yyyyMMdd-HHmmss>/}. */
public final class ResultsFolder {

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private ResultsFolder() {
    }

    /** Creates a new folder for {@code scenario} under {@code base}, with a suffix if the second is taken. */
    public static Path create(Path base, String scenario) throws IOException {
        Files.createDirectories(base);
        String name = scenario + "-" + ZonedDateTime.now(ZoneOffset.UTC).format(STAMP);
        Path dir = base.resolve(name);
        for (int i = 2; Files.exists(dir); i++) {
            dir = base.resolve(name + "-" + i);
        }
        return Files.createDirectories(dir);
    }
}
