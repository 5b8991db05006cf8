package io.servegate.sim.report;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/** The machine and JVM a report was made on, and when (results in virtual time do not depend on them; speed does). */
public final class Environment {

    private Environment() {
    }

    public static Map<String, Object> now() {
        Map<String, Object> env = new LinkedHashMap<>();
        env.put("date (UTC)", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        env.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        env.put("javaVersion", System.getProperty("java.version"));
        env.put("javaVm", System.getProperty("java.vm.name"));
        env.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        return env;
    }
}
