package io.servegate.gateway.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What docker-compose.yml promises that needs no Docker engine: a healthcheck on every
 * long-running service, one admin and one metrics token shared by the services that use them,
 * Prometheus scraping the gateway with the token, and Grafana's provisioning (Grafana's upstream
 * image cannot be pulled where the tests run, so this is what checks it): one default Prometheus
 * data source at the compose service's address, the dashboard folder mounted where the provider
 * reads it, and every panel of the shipped dashboard on that data source.
 */
class ComposeFilesTest {

    private static final Path ROOT = Path.of("..");

    @SuppressWarnings("unchecked")
    private static <T> T yaml(Path file) throws IOException {
        return (T) new Yaml().load(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> services() throws IOException {
        Map<String, Object> compose = yaml(ROOT.resolve("docker-compose.yml"));
        return (Map<String, Map<String, Object>>) compose.get("services");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> env(Map<String, Object> service) {
        return (Map<String, String>) service.getOrDefault("environment", Map.of());
    }

    /** host path (relative to the repository root) of the volume mounted at {@code target}. */
    @SuppressWarnings("unchecked")
    private static Path hostPathOf(Map<String, Object> service, String target) {
        for (String volume : (List<String>) service.get("volumes")) {
            String[] parts = volume.split(":");
            if (parts[1].equals(target)) {
                return ROOT.resolve(parts[0]);
            }
        }
        throw new AssertionError("no volume mounted at " + target + " in " + service.get("volumes"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyLongRunningServiceHasAHealthcheck() throws IOException {
        Map<String, Map<String, Object>> services = services();
        assertThat(services).containsKeys("redis", "gateway", "onnx", "sklearn", "prometheus", "grafana",
                "register-demo");
        services.forEach((name, service) -> {
            if (!"no".equals(service.get("restart"))) {
                Map<String, Object> check = (Map<String, Object>) service.get("healthcheck");
                assertThat(check).as("healthcheck of " + name).isNotNull();
                assertThat((List<String>) check.get("test")).as("healthcheck test of " + name).hasSizeGreaterThan(1);
            }
        });
    }

    /**
     * register-demo tells the user the host port the query API is published on: compose passes it
     * the same SERVEGATE_QUERY_PORT the gateway's port mapping uses, and the script, run against a
     * stand-in admin API, prints it.
     */
    @Test
    @SuppressWarnings("unchecked")
    void registerDemoPrintsThePublishedQueryPort() throws Exception {
        Map<String, Map<String, Object>> services = services();
        String published = ((List<String>) services.get("gateway").get("ports")).stream()
                .filter(p -> p.endsWith(":1337")).findFirst().orElseThrow().replace(":1337", "");
        assertThat(env(services.get("register-demo")).get("SERVEGATE_QUERY_PORT")).isEqualTo(published)
                .contains("SERVEGATE_QUERY_PORT");

        com.sun.net.httpserver.HttpServer admin = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        admin.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(200, 2);
            exchange.getResponseBody().write("{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            exchange.close();
        });
        admin.start();
        try {
            String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
            ProcessBuilder run = new ProcessBuilder(python, ROOT.resolve("compose/register-demo.py").toString())
                    .redirectErrorStream(true);
            run.environment().put("ADMIN_URL", "http://127.0.0.1:" + admin.getAddress().getPort());
            run.environment().put("SERVEGATE_QUERY_PORT", "14337");
            Process p = run.start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as(out).isZero();
            assertThat(out).contains("http://localhost:14337/fashion/predict").doesNotContain(":1337/");
        } finally {
            admin.stop(0);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void prometheusScrapesEveryGatewayWithTheMetricsToken() throws IOException {
        Map<String, Map<String, Object>> services = services();
        Map<String, String> gateway = env(services.get("gateway"));
        assertThat(gateway.get("SERVEGATE_ADMIN_TOKEN")).isNotBlank()
                .isEqualTo(env(services.get("register-demo")).get("SERVEGATE_ADMIN_TOKEN"));
        assertThat(gateway.get("SERVEGATE_METRICS_TOKEN")).isNotBlank()
                .isNotEqualTo(gateway.get("SERVEGATE_ADMIN_TOKEN"))
                .isEqualTo(env(services.get("prometheus")).get("SERVEGATE_METRICS_TOKEN"));

        Map<String, Object> config = yaml(ROOT.resolve("compose/prometheus/prometheus.yml"));
        Map<String, Object> job = ((List<Map<String, Object>>) config.get("scrape_configs")).get(0);
        assertThat(job.get("metrics_path")).isEqualTo("/metrics");
        // every gateway of the fleet is scraped, each with the same tokens
        List<String> gateways = services.entrySet().stream()
                .filter(e -> String.valueOf(e.getValue().get("image")).startsWith("servegate/gateway:"))
                .map(Map.Entry::getKey).sorted().toList();
        assertThat(gateways).containsExactly("gateway", "gateway-2", "gateway-3");
        gateways.forEach(name -> assertThat(env(services.get(name))).as(name).isEqualTo(gateway));
        assertThat(((List<Map<String, Object>>) job.get("static_configs")).get(0).get("targets"))
                .isEqualTo(gateways.stream().map(name -> name + ":1337").toList());
        Map<String, Object> auth = (Map<String, Object>) job.get("authorization");
        assertThat(auth.get("type")).isEqualTo("Bearer");
        String tokenFile = (String) auth.get("credentials_file");
        assertThat(Files.readString(ROOT.resolve("compose/prometheus/Dockerfile")))
                .as("the image writes SERVEGATE_METRICS_TOKEN where prometheus.yml reads it")
                .contains("\\\"$SERVEGATE_METRICS_TOKEN\\\" > " + tokenFile);
    }

    /** The gateways share a Redis registry, so they form a fleet: each one starts only with the fleet's secret. */
    @Test
    void theFleetsGatewaysShareAFleetSecret() throws IOException {
        Map<String, Map<String, Object>> services = services();
        for (String name : List.of("gateway", "gateway-2", "gateway-3")) {
            Map<String, String> env = env(services.get(name));
            assertThat(env).as(name).containsEntry("SERVEGATE_REGISTRY_STORE", "redis");
            assertThat(env.get("SERVEGATE_FLEET_SECRET")).as(name).isNotBlank()
                    .isNotEqualTo(env.get("SERVEGATE_ADMIN_TOKEN")).isNotEqualTo(env.get("SERVEGATE_METRICS_TOKEN"))
                    .isEqualTo(env(services.get("gateway")).get("SERVEGATE_FLEET_SECRET"));
        }
        assertThat(services.entrySet()).filteredOn(e -> !e.getKey().startsWith("gateway"))
                .allSatisfy(e -> assertThat(env(e.getValue())).as(e.getKey()).doesNotContainKey("SERVEGATE_FLEET_SECRET"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void grafanaIsProvisionedWithPrometheusAndTheShippedDashboard() throws IOException {
        Map<String, Map<String, Object>> services = services();
        Map<String, Object> grafana = services.get("grafana");
        Path provisioning = hostPathOf(grafana, "/etc/grafana/provisioning");

        List<Map<String, Object>> sources = new ArrayList<>();
        try (Stream<Path> files = Files.list(provisioning.resolve("datasources"))) {
            for (Path f : files.toList()) {
                sources.addAll((List<Map<String, Object>>) ((Map<String, Object>) yaml(f)).get("datasources"));
            }
        }
        assertThat(sources).singleElement().satisfies(ds -> {
            assertThat(ds.get("type")).isEqualTo("prometheus");
            assertThat(ds.get("isDefault")).isEqualTo(true);
            assertThat(ds.get("url")).isEqualTo("http://prometheus:9090");
        });
        assertThat(services).containsKey("prometheus");
        assertThat(Files.readString(ROOT.resolve("compose/prometheus/Dockerfile")))
                .contains("--web.listen-address=:9090");

        List<Map<String, Object>> providers = new ArrayList<>();
        try (Stream<Path> files = Files.list(provisioning.resolve("dashboards"))) {
            for (Path f : files.toList()) {
                providers.addAll((List<Map<String, Object>>) ((Map<String, Object>) yaml(f)).get("providers"));
            }
        }
        assertThat(providers).singleElement().satisfies(p -> assertThat(p.get("type")).isEqualTo("file"));
        String path = (String) ((Map<String, Object>) providers.get(0).get("options")).get("path");
        Path dashboards = hostPathOf(grafana, path);
        assertThat(dashboards.resolve("servegate.json")).exists();

        JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(dashboards.resolve("servegate.json")));
        JsonNode variable = null;
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (v.path("type").asString().equals("datasource")) {
                variable = v;
            }
        }
        assertThat(variable).as("a data source variable").isNotNull();
        assertThat(variable.path("query").asString()).as("of type prometheus, which picks the default one")
                .isEqualTo("prometheus");
        String ref = "${" + variable.path("name").asString() + "}";
        List<JsonNode> uses = new ArrayList<>();
        collectDatasources(dashboard.path("panels"), uses);
        assertThat(uses).as("data sources of the panels and their queries").isNotEmpty().allSatisfy(ds -> {
            assertThat(ds.path("type").asString()).isEqualTo("prometheus");
            assertThat(ds.path("uid").asString()).isEqualTo(ref);
        });
    }

    private static void collectDatasources(JsonNode node, List<JsonNode> out) {
        if (node.isObject()) {
            if (node.has("datasource")) {
                out.add(node.get("datasource"));
            }
            node.properties().forEach(e -> collectDatasources(e.getValue(), out));
        } else if (node.isArray()) {
            node.forEach(n -> collectDatasources(n, out));
        }
    }
}
