package io.servegate.gateway.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.gateway.testsupport.JavaCommand;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Every metric the Grafana dashboard ({@code helm/servegate/dashboards/servegate.json}) queries is
 * one the gateway exports: a gateway with one emulated replica answers predictions, a cache hit
 * and a default, then the replica's outputs turn undecodable until its circuit opens, and a pool of
 * one multi-model replica loads a model for a query; the metric names in the dashboard's PromQL
 * must all be in the {@code /actuator/prometheus} scrape.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    // the circuit opens after two failed batches, so a few queries show its transitions
    "servegate.rpc.minimum-number-of-calls=2",
    "servegate.rpc.sliding-window-size=2",
    // the autoscaler's metrics: a model deployed through the process manager, autoscaled
    "servegate.containers.process.require-admin-token=false", "servegate.autoscaling.tick=200ms"})
class GrafanaDashboardTest {

    private static final Path DASHBOARD = Path.of("..", "helm", "servegate", "dashboards", "servegate.json");

    /** A metric name right before its label matchers or range: {@code name{...}} or {@code name[5m]}. */
    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*[{\\[]");
    /** The metric of a Grafana template variable's {@code label_values(metric, label)}. */
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,");
    private static final Pattern OWN_METRIC = Pattern.compile("servegate_[a-zA-Z0-9_]+");

    /** The emulated container on the test classpath, for deploy_model. */
    private static final List<String> COMMAND = JavaCommand.inTempDirectory("servegate-dashboard-deploy",
            "io.servegate.containers.emulated.EmulatedContainer");

    @DynamicPropertySource
    static void allowTheContainerCommand(DynamicPropertyRegistry properties) {
        JavaCommand.allow(properties, COMMAND);
    }

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private GatewayCalls calls;

    @Test
    void everyMetricTheDashboardQueriesIsExported() throws Exception {
        Set<String> queried = queriedMetrics(json.readTree(Files.readString(DASHBOARD)));
        assertThat(queried).as("metrics in the dashboard").contains("servegate_request_latency_seconds_bucket",
                "servegate_defaults_total", "servegate_cache_requests_total", "servegate_batch_size_count",
                "servegate_queue_length", "servegate_circuit_transitions_total");

        Path faultOn = Files.createTempDirectory("servegate-dashboard").resolve("garbage");
        try (ContainerProcess container = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "emu",
                "--version", "1", "--beta-ms", "1", "--alpha-ms", "0.1", "--fault", "garbage",
                "--fault-file", faultOn.toString())) {
            calls().admin("add_app", Map.of("name", "dash", "input_type", "floats", "default_output", "none",
                    "latency_slo_micros", 2_000_000));
            calls().admin("add_model", Map.of("model_name", "emu", "model_version", "1", "input_type", "floats"));
            calls().admin("add_model_links", Map.of("app_name", "dash", "model_names", List.of("emu")));
            calls().admin("add_container", Map.of("model_name", "emu", "model_version", "1", "address",
                    container.address()));
            calls().awaitAvailable();

            for (float[] input : List.of(new float[] {1}, new float[] {2}, new float[] {1})) {
                assertThat(calls().predict("dash", input).get("default").booleanValue()).isFalse();
            }
            Files.createFile(faultOn);
            long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            float next = 100;
            while (!exported().contains("servegate_circuit_transitions_total")) {
                assertThat(System.nanoTime()).as("the circuit opened").isLessThan(until);
                calls().predict("dash", new float[] {next++});
            }
        }

        calls().admin("deploy_model", Map.of("model_name", "scaled", "model_version", "1", "input_type", "floats",
                "command", COMMAND, "num_replicas", 1));
        calls().admin("set_autoscaling", Map.of("model_name", "scaled", "min_replicas", 2, "max_replicas", 2));
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!exported().contains("servegate_autoscaler_decisions_total")) {
            assertThat(System.nanoTime()).as("the autoscaler decided").isLessThan(until);
            Thread.sleep(100);
        }

        // the Shared pools row: a pool of one multi-model replica loads a model for a query
        try (ContainerProcess shared = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "pooled",
                "--version", "1", "--models", "2", "--load-ms", "10", "--model-size-bytes", "100",
                "--memory-budget-bytes", "200", "--beta-ms", "1", "--alpha-ms", "0.1")) {
            calls().admin("deploy_model", Map.of("pool", "dash", "model_name", "pooled-0", "model_version", "1",
                    "input_type", "floats", "addresses", List.of(shared.address()), "memory_budget_bytes", 200,
                    "model_size_bytes", 100, "load_time_micros", 10_000));
            calls().admin("add_app", Map.of("name", "pooled", "input_type", "floats", "default_output", "none",
                    "latency_slo_micros", 2_000_000));
            calls().admin("add_model_links", Map.of("app_name", "pooled", "model_names", List.of("pooled-0")));
            long poolUntil = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!calls().adminGet("get_placements").get(0).get("replicas").get(0).get("available").booleanValue()) {
                assertThat(System.nanoTime()).as("the pool's replica became available").isLessThan(poolUntil);
                Thread.sleep(50);
            }
            assertThat(calls().predict("pooled", new float[] {1}).get("default").booleanValue()).isFalse();
        }
        assertThat(queried).as("the Shared pools row").contains("servegate_pool_loads_total",
                "servegate_pool_rejected_total", "servegate_pool_load_time_seconds_bucket");

        Set<String> exported = exported();
        assertThat(exported).as("metrics the dashboard queries, in /actuator/prometheus").containsAll(queried);
    }

    /** The metric names of every PromQL expression and template variable query in the dashboard. */
    static Set<String> queriedMetrics(JsonNode dashboard) {
        Set<String> names = new TreeSet<>();
        Set<String> mentioned = new TreeSet<>();
        collect(dashboard, names, mentioned);
        // a bare selector (no braces, no range) would slip past SELECTOR: the dashboard writes none
        assertThat(names).as("selectors found").containsAll(mentioned);
        return names;
    }

    private static void collect(JsonNode node, Set<String> names, Set<String> mentioned) {
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                JsonNode value = field.getValue();
                if (value.isString() && Set.of("expr", "query", "definition").contains(field.getKey())) {
                    String query = value.asString();
                    for (Pattern p : List.of(SELECTOR, LABEL_VALUES)) {
                        Matcher m = p.matcher(query);
                        while (m.find()) {
                            names.add(m.group(1));
                        }
                    }
                    Matcher own = OWN_METRIC.matcher(query);
                    while (own.find()) {
                        mentioned.add(own.group());
                    }
                } else {
                    collect(value, names, mentioned);
                }
            }
        } else if (node.isArray()) {
            for (JsonNode item : node) {
                collect(item, names, mentioned);
            }
        }
    }

    /** Metric names with at least one sample in the Prometheus scrape. */
    private Set<String> exported() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort
                + "/actuator/prometheus")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        Set<String> names = new TreeSet<>();
        for (String line : r.body().split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
    }

    private GatewayCalls calls() {
        if (calls == null) {
            calls = new GatewayCalls(queryPort, adminServer.port(), json);
        }
        return calls;
    }
}
