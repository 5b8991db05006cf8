package io.servegate.gateway.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The command line of a model container's main class in a fresh JVM on the test classpath, for
 * container managers to run. The classpath goes in an {@code @argfile}: ONNX Runtime crashes on
 * command lines over a few KiB.
 */
public final class JavaCommand {

    private JavaCommand() {
    }

    /** {@code java @argfile args...}, the argfile (written into {@code dir}) holding a small heap, the classpath and the main class. */
    public static List<String> of(Path dir, String mainClass, String... args) throws IOException {
        Path argfile = Files.createTempFile(dir, "java-", ".args");
        Files.writeString(argfile, "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp \""
                + System.getProperty("java.class.path").replace("\\", "\\\\") + "\" " + mainClass + "\n");
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + argfile));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** {@link #of} with the argfile in a new temporary directory named after {@code prefix}; for static initializers. */
    public static List<String> inTempDirectory(String prefix, String mainClass, String... args) {
        try {
            return of(Files.createTempDirectory(prefix), mainClass, args);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Allows {@code command} (its java executable and argfile) in the process container manager of a test's gateway. */
    public static void allow(DynamicPropertyRegistry properties, List<String> command) {
        properties.add("servegate.containers.process.allowed-commands[0]", () -> String.join(",", command.subList(0, 2)));
    }
}
