package io.servegate.gateway.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The raw Redis floor of a feedback phase: one feedback of the phase's kind is sent while
 * {@code redis-cli MONITOR} captures the selection-state command it made (one EVALSHA of the
 * observe script), and {@code redis-benchmark} replays that very command with the same number of
 * clients (per user: the key's context replaced by a random one of {@code users}). Both tools
 * are taken from next to {@code $REDIS_SERVER}, or the PATH.
 */
final class RedisFloor {

    private final FeedbackGatewayClient gateway;
    private final FeedbackBodies bodies;
    private final int clients;
    private final int users;

    RedisFloor(FeedbackGatewayClient gateway, FeedbackBodies bodies, int clients, int users) {
        this.gateway = gateway;
        this.bodies = bodies;
        this.clients = clients;
        this.users = users;
    }

    /**
     * Captures the Redis command one feedback of {@code phase} makes and replays it with
     * redis-benchmark: {requests_per_s, command, clients, requests}.
     */
    Map<String, Object> measure(int port, String phase, int requests) throws Exception {
        List<String> command = capture(port, "cache-hits".equals(phase) ? bodies.hit(0) : bodies.perUser(1));
        boolean perUser = !"cache-hits".equals(phase);
        if (perUser) {
            // EVALSHA sha numkeys key ...: a random user's key per command, as in the phase
            String key = command.get(3);
            command.set(3, key.substring(0, key.lastIndexOf(':') + 1) + "__rand_int__");
        }
        List<String> cmd = new ArrayList<>(List.of(tool("redis-benchmark"), "-p", Integer.toString(port),
                "-c", Integer.toString(clients), "-n", Integer.toString(requests), "--csv"));
        if (perUser) {
            cmd.addAll(List.of("-r", Integer.toString(users)));
        }
        cmd.addAll(command);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(5, TimeUnit.MINUTES);
        double rps = -1;
        for (String line : output.split("\n")) {
            String[] f = line.split("\",\"");
            if (f.length > 1 && !line.startsWith("\"test\"")) {
                rps = Double.parseDouble(f[1].replace("\"", ""));
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("requests_per_s", rps);
        m.put("clients", clients);
        m.put("requests", requests);
        m.put("command", FeedbackGatewayClient.abbreviate(String.join(" ", command)));
        if (rps < 0) {
            m.put("error", FeedbackGatewayClient.abbreviate(output));
        }
        return m;
    }

    /** The arguments of the first EVALSHA Redis sees while one feedback with {@code body} is answered. */
    private List<String> capture(int port, byte[] body) throws Exception {
        Process monitor = new ProcessBuilder(tool("redis-cli"), "-p", Integer.toString(port), "monitor")
                .redirectErrorStream(true).start();
        try {
            BufferedReader lines = new BufferedReader(
                    new InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8));
            if (!"OK".equals(lines.readLine())) {
                throw new IllegalStateException("redis-cli monitor did not start");
            }
            FeedbackGatewayClient.Response r = gateway.post(FeedbackEndpoint.UPDATE.path, body)
                    .block(Duration.ofSeconds(30));
            if (r == null || r.status() != 200) {
                throw new IllegalStateException("feedback for the floor capture failed: " + r);
            }
            Pattern arg = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");
            for (String line; (line = lines.readLine()) != null; ) {
                if (line.contains("\"EVALSHA\"") || line.contains("\"evalsha\"")) {
                    List<String> args = new ArrayList<>();
                    Matcher m = arg.matcher(line);
                    while (m.find()) {
                        args.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
                    }
                    return args;
                }
            }
            throw new IllegalStateException("no EVALSHA seen");
        } finally {
            monitor.destroy();
        }
    }

    /** A Redis tool next to $REDIS_SERVER, else from the PATH. */
    private static String tool(String name) {
        String server = System.getenv("REDIS_SERVER");
        if (server != null && !server.isBlank()) {
            Path sibling = Path.of(server).resolveSibling(name);
            if (Files.isExecutable(sibling)) {
                return sibling.toString();
            }
        }
        return name;
    }
}
