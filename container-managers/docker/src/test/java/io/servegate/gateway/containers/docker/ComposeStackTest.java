package io.servegate.gateway.containers.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.abort;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * {@code docker-compose up} of docker-compose.yml with the images {@code bin/images --local}
 * builds from the local bases: Redis, a fleet of three gateways, both model containers and
 * Prometheus each report healthy by their own healthcheck, the registration job exits 0, every
 * gateway answers the app with a prediction, and Prometheus scrapes the gateways with the metrics
 * token ({@code up == 1}).
 * Grafana's upstream image cannot be pulled here; ComposeFilesTest checks its provisioning.
 */
@EnabledIf(value = "io.servegate.gateway.containers.docker.ComposeStackTest#available",
        disabledReason = "no Docker engine, docker-compose or local bases: run bin/docker-setup (bin/test does)")
class ComposeStackTest {

    private static final Path ROOT = Path.of("..", "..").toAbsolutePath().normalize();
    private static final List<String> HEALTHY = List.of("redis", "gateway", "gateway-2", "gateway-3", "onnx", "sklearn",
            "prometheus");
    private static final List<String> BASES = List.of("servegate/base-java:bookworm",
            "servegate/base-python:bookworm", "servegate/base-prometheus:bookworm", "servegate/base-redis:bookworm");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static boolean available() {
        try {
            if (run(Map.of(), Duration.ofSeconds(30), "docker-compose", "version").exit() != 0) {
                return false;
            }
            for (String base : BASES) {
                if (run(Map.of(), Duration.ofSeconds(30), "docker", "image", "inspect", base).exit() != 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void composeBringsTheStackUpHealthyEveryGatewayPredictsAndPrometheusScrapesThem() throws Exception {
        if (!Files.isRegularFile(ROOT.resolve("containers/onnx/target/onnx-container.jar"))
                || Files.list(ROOT.resolve("gateway/target")).noneMatch(p -> p.toString().endsWith("-SNAPSHOT.jar"))) {
            abort("the gateway and onnx jars are not built (mvn package)");
        }
        Result images = run(Map.of(), Duration.ofMinutes(10), "bin/images", "--local", "--no-jars", "gateway", "onnx",
                "sklearn", "prometheus");
        assertThat(images.exit()).as("bin/images:\n" + images.output()).isZero();

        Map<String, String> env = new HashMap<>();
        List<Integer> queryPorts = List.of();
        int prometheusPort = 0;
        String project = "servegate-compose-test";
        List<String> compose = List.of("docker-compose", "-p", project, "-f", ROOT.resolve("docker-compose.yml").toString());
        try {
            List<String> up = new ArrayList<>(compose);
            up.addAll(List.of("up", "-d", "redis", "gateway", "gateway-2", "gateway-3", "onnx", "sklearn", "prometheus", "register-demo"));
            Result started = null;
            // a host port found free can still be taken before Docker's proxy binds it: fresh ports, again
            for (int attempt = 0; attempt < 3; attempt++) {
                if (attempt > 0) {
                    run(env, Duration.ofMinutes(2), down(compose));
                }
                List<Integer> ports = freePorts(6);
                queryPorts = ports.subList(0, 3);
                prometheusPort = ports.get(5);
                env = new HashMap<>(Map.of("REDIS_IMAGE", "servegate/base-redis:bookworm",
                        "SERVEGATE_ADMIN_TOKEN", "compose-test-admin", "SERVEGATE_METRICS_TOKEN", "compose-test-metrics"));
                env.putAll(Map.of("SERVEGATE_QUERY_PORT", ports.get(0).toString(), "SERVEGATE_QUERY_PORT_2",
                        ports.get(1).toString(), "SERVEGATE_QUERY_PORT_3", ports.get(2).toString(),
                        "SERVEGATE_ADMIN_PORT", ports.get(3).toString(), "SERVEGATE_GRPC_PORT", ports.get(4).toString(),
                        "PROMETHEUS_PORT", ports.get(5).toString()));
                started = run(env, Duration.ofMinutes(5), up.toArray(String[]::new));
                if (started.exit() == 0 || !started.output().contains("address already in use")) {
                    break;
                }
            }
            assertThat(started.exit()).as("docker-compose up:\n" + started.output()).isZero();

            long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            Map<String, String> health = new HashMap<>();
            while (System.nanoTime() < until) {
                for (String service : HEALTHY) {
                    health.put(service, inspect(env, compose, service, "{{.State.Health.Status}}"));
                }
                if (health.values().stream().allMatch("healthy"::equals)) {
                    break;
                }
                Thread.sleep(2000);
            }
            assertThat(health).as("health of each service").allSatisfy((s, h) -> assertThat(h).isEqualTo("healthy"));

            String registration = "";
            while (System.nanoTime() < until && !(registration = inspect(env, compose, "register-demo",
                    "{{.State.Status}} {{.State.ExitCode}}")).startsWith("exited")) {
                Thread.sleep(1000);
            }
            assertThat(registration).as("register-demo").isEqualTo("exited 0");

            StringBuilder input = new StringBuilder("{\"input\": [");
            for (int i = 0; i < 784; i++) {
                input.append(i == 0 ? "" : ",").append((i % 28) / 28.0);
            }
            String body = input.append("]}").toString();
            // the three gateways form a fleet: each answers with a prediction, forwarding to the owner
            for (int port : queryPorts) {
                String answer = "";
                while (System.nanoTime() < until && !answer.contains("\"default\":false")) {
                    HttpResponse<String> predicted = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                    + port + "/fashion/predict")).header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(predicted.statusCode()).as("gateway on port %d", port).isEqualTo(200);
                    answer = predicted.body();
                    Thread.sleep(answer.contains("\"default\":false") ? 0 : 500);
                }
                assertThat(answer).as("a prediction through the gateway on port %d", port).contains("\"default\":false");
            }

            String up1 = "";
            String query = URLEncoder.encode("up{job=\"servegate-gateway\"}", StandardCharsets.UTF_8);
            while (System.nanoTime() < until && !up1.contains("\"1\"]")) {
                up1 = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + prometheusPort
                        + "/api/v1/query?query=" + query)).build(), HttpResponse.BodyHandlers.ofString()).body();
                Thread.sleep(1000);
            }
            assertThat(up1).as("Prometheus' view of the gateway target").contains("\"1\"]");
        } finally {
            run(env, Duration.ofMinutes(2), down(compose));
        }
    }

    private static String inspect(Map<String, String> env, List<String> compose, String service, String format)
            throws IOException {
        List<String> ps = new ArrayList<>(compose);
        ps.addAll(List.of("ps", "-q", service));
        String id = run(env, Duration.ofSeconds(30), ps.toArray(String[]::new)).output().strip();
        if (id.isEmpty()) {
            return "absent";
        }
        return run(env, Duration.ofSeconds(30), "docker", "inspect", "-f", format, id).output().strip();
    }

    private record Result(int exit, String output) {
    }

    private static Result run(Map<String, String> env, Duration timeout, String... command) throws IOException {
        Path log = Files.createTempFile("compose-test", ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            boolean ended = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!ended) {
                p.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            return ended ? new Result(p.exitValue(), output) : new Result(-1, output + "\n(timed out)");
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    private static String[] down(List<String> compose) {
        List<String> down = new ArrayList<>(compose);
        down.addAll(List.of("down", "-v", "--remove-orphans"));
        return down.toArray(String[]::new);
    }

    /**
     * Distinct ports free on every interface (Docker publishes on 0.0.0.0), drawn below the
     * kernel's ephemeral range so that no outgoing connection takes one before Docker binds it.
     */
    private static List<Integer> freePorts(int count) {
        List<Integer> ports = new ArrayList<>();
        while (ports.size() < count) {
            int port = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            if (ports.contains(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(port));
                ports.add(port);
            } catch (IOException taken) {
                // in use: draw another
            }
        }
        return ports;
    }
}
