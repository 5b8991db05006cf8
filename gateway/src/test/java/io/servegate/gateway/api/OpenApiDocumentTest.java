package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * Checks the OpenAPI document of both HTTP APIs ({@code src/openapi/servegate-openapi.yaml} at
 * the repository root) against the routes that {@code GatewayConfiguration} registers.
 */
class OpenApiDocumentTest {

    /** Relative to the gateway module directory, the working directory under Surefire. */
    private static final Path DOCUMENT = Path.of("..", "src", "openapi", "servegate-openapi.yaml");

    private static final Path ROUTE_SOURCE =
            Path.of("src", "main", "java", "io", "servegate", "gateway", "config", "GatewayConfiguration.java");

    private static final String ERROR_SCHEMA = "#/components/schemas/Error";
    /** The Open Inference Protocol's error body, {@code {"error"}}, under {@code /v2}. */
    private static final String OIP_ERROR_SCHEMA = "#/components/schemas/OipError";

    private record Route(String method, String path) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    /** The query port's routes (GatewayConfiguration#queryRoutes). */
    private static final List<Route> QUERY_ROUTES = List.of(
            new Route("GET", "/v2"),
            new Route("GET", "/v2/health/live"),
            new Route("GET", "/v2/health/ready"),
            new Route("GET", "/v2/models/{model}"),
            new Route("GET", "/v2/models/{model}/ready"),
            new Route("POST", "/v2/models/{model}/infer"),
            new Route("POST", "/v2/models/{model}/versions/{version}/infer"),
            new Route("GET", "/metrics"),
            new Route("POST", "/{app}/predict"),
            new Route("POST", "/{app}/update"));

    /** The admin port's routes (GatewayConfiguration#adminServer). */
    private static final List<Route> ADMIN_ROUTES = List.of(
            new Route("GET", "/admin/ping"),
            new Route("POST", "/admin/add_app"),
            new Route("POST", "/admin/delete_app"),
            new Route("POST", "/admin/create_query_key"),
            new Route("POST", "/admin/get_query_keys"),
            new Route("POST", "/admin/revoke_query_key"),
            new Route("POST", "/admin/add_model"),
            new Route("POST", "/admin/set_model_version"),
            new Route("POST", "/admin/delete_versioned_model"),
            new Route("POST", "/admin/add_model_links"),
            new Route("POST", "/admin/delete_model_links"),
            new Route("POST", "/admin/add_container"),
            new Route("POST", "/admin/delete_container"),
            new Route("POST", "/admin/get_all_applications"),
            new Route("POST", "/admin/get_application"),
            new Route("POST", "/admin/get_linked_models"),
            new Route("POST", "/admin/get_all_models"),
            new Route("POST", "/admin/get_model"),
            new Route("POST", "/admin/get_all_containers"),
            new Route("POST", "/admin/deploy_model"),
            new Route("POST", "/admin/set_num_replicas"),
            new Route("GET", "/admin/get_deployments"),
            new Route("GET", "/admin/get_placements"),
            new Route("POST", "/admin/set_autoscaling"),
            new Route("POST", "/admin/get_autoscaling"),
            new Route("POST", "/admin/set_pipeline_tuning"),
            new Route("POST", "/admin/add_pipeline"),
            new Route("POST", "/admin/delete_pipeline"),
            new Route("POST", "/admin/get_pipeline"),
            new Route("POST", "/admin/get_all_pipelines"),
            new Route("POST", "/admin/profile_model"),
            new Route("POST", "/admin/get_profiles"),
            new Route("POST", "/admin/apply_pipeline_plan"),
            new Route("POST", "/admin/start_rollout"),
            new Route("POST", "/admin/get_rollout"),
            new Route("POST", "/admin/pause_rollout"),
            new Route("POST", "/admin/resume_rollout"),
            new Route("POST", "/admin/abort_rollout"),
            new Route("GET", "/admin/get_fleet"));

    /**
     * Error statuses whose body is deliberately not an {@code Error}: the OIP model-ready call
     * answers 400 {@code {"name", "ready": false, "error"}} when the model is not ready, and the
     * server's readiness 503 {@code {"ready": false, "reason"}} while warming up or shutting down.
     */
    private static final Set<String> NON_ERROR_BODIES = Set.of("GET /v2/models/{model}/ready 400",
            "GET /v2/health/ready 503");

    private static final List<String> HTTP_METHODS =
            List.of("get", "put", "post", "delete", "options", "head", "patch", "trace");

    private static Map<String, Object> document;

    @BeforeAll
    static void load() throws IOException {
        assertThat(DOCUMENT).as("the OpenAPI document").isRegularFile();
        try (Reader reader = Files.newBufferedReader(DOCUMENT, StandardCharsets.UTF_8)) {
            document = new Yaml().load(reader);
        }
        assertThat(document).as("the parsed document").isNotNull();
    }

    @Test
    void isAnOpenApi3Document() {
        assertThat(String.valueOf(document.get("openapi"))).startsWith("3.");
        assertThat(map(document, "info")).containsKeys("title", "version");
    }

    @Test
    void theRouteListsHereMatchTheRoutesGatewayConfigurationRegisters() throws IOException {
        // Keeps this test's explicit lists honest: a route added to the configuration must be added here too.
        String source = Files.readString(ROUTE_SOURCE, StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("\\.(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\\(\"([^\"]+)\"").matcher(source);
        Set<Route> registered = new LinkedHashSet<>();
        while (m.find()) {
            registered.add(new Route(m.group(1), m.group(2)));
        }
        assertThat(registered).as("routes found in " + ROUTE_SOURCE).isNotEmpty();
        assertThat(allRoutes()).containsExactlyInAnyOrderElementsOf(registered);
    }

    @Test
    void everyRouteIsDocumentedWithItsMethod() {
        Map<String, Object> paths = map(document, "paths");
        List<Route> missing = new ArrayList<>();
        for (Route r : allRoutes()) {
            Object item = paths.get(r.path());
            if (!(item instanceof Map<?, ?> operations) || !operations.containsKey(r.method().toLowerCase(Locale.ROOT))) {
                missing.add(r);
            }
        }
        assertThat(missing).as("routes missing from " + DOCUMENT).isEmpty();
    }

    @Test
    void documentsNoOperationTheGatewayDoesNotHave() {
        List<Route> documented = documentedOperations();
        assertThat(allRoutes()).containsAll(documented);
        assertThat(documented).hasSameSizeAs(allRoutes());
    }

    @Test
    void queryPathsAreOnPort1337AndAdminPathsOnPort1338() {
        assertThat(urls(document)).as("top-level servers").singleElement().asString().endsWith(":1337");
        Map<String, Object> paths = map(document, "paths");
        for (Route r : QUERY_ROUTES) {
            assertThat(map(paths, r.path())).as("%s has no servers of its own", r.path()).doesNotContainKey("servers");
        }
        for (Route r : ADMIN_ROUTES) {
            assertThat(urls(map(paths, r.path()))).as("servers of %s", r.path())
                    .singleElement().asString().endsWith(":1338");
        }
    }

    @Test
    void everyOperationHasASuccessResponse() {
        Map<String, Object> paths = map(document, "paths");
        for (Route r : documentedOperations()) {
            assertThat(responses(paths, r).keySet()).as("responses of %s", r)
                    .anyMatch(status -> status.startsWith("2"));
        }
    }

    @Test
    void errorResponsesUseTheSharedErrorSchema() {
        Map<String, Object> error = map(map(map(document, "components"), "schemas"), "Error");
        assertThat(map(error, "properties")).containsKeys("error", "cause");
        assertThat(List.<Object>copyOf(list(error, "required"))).containsExactlyInAnyOrder("error", "cause");
        Map<String, Object> oipError = map(map(map(document, "components"), "schemas"), "OipError");
        assertThat(map(oipError, "properties")).containsOnlyKeys("error");

        Map<String, Object> paths = map(document, "paths");
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (Route r : documentedOperations()) {
            for (Map.Entry<String, Object> e : responses(paths, r).entrySet()) {
                String status = e.getKey();
                if (!(status.startsWith("4") || status.startsWith("5")) || NON_ERROR_BODIES.contains(r + " " + status)) {
                    continue;
                }
                checked++;
                Map<String, Object> response = resolve(asMap(e.getValue(), r + " " + status));
                Object schema = map(map(map(response, "content"), "application/json"), "schema").get("$ref");
                String expected = r.path().startsWith("/v2") ? OIP_ERROR_SCHEMA : ERROR_SCHEMA;
                if (!expected.equals(schema)) {
                    wrong.add(r + " " + status + " -> " + schema);
                }
            }
        }
        assertThat(checked).as("error responses checked").isPositive();
        assertThat(wrong).as("error responses not using " + ERROR_SCHEMA + " (" + OIP_ERROR_SCHEMA + " under /v2)")
                .isEmpty();
    }

    @Test
    void adminAndMetricsOperationsDeclareTheBearerTokenAnd401() {
        Map<String, Object> schemes = map(map(document, "components"), "securitySchemes");
        assertThat(map(schemes, "adminToken")).containsEntry("type", "http").containsEntry("scheme", "bearer");
        assertThat(map(schemes, "metricsToken")).containsEntry("type", "http").containsEntry("scheme", "bearer");
        Map<String, Object> paths = map(document, "paths");
        List<Route> guarded = new ArrayList<>(ADMIN_ROUTES);
        guarded.add(new Route("GET", "/metrics"));
        for (Route r : guarded) {
            Map<String, Object> operation = map(map(paths, r.path()), r.method().toLowerCase(Locale.ROOT));
            assertThat(operation.get("security")).as("security of %s", r).asString()
                    .contains(r.path().equals("/metrics") ? "metricsToken" : "adminToken");
            assertThat(responses(paths, r)).as("responses of %s", r).containsKey("401");
        }
    }

    /** An operation's responses by status; YAML may give unquoted statuses as integers, so keys are normalised. */
    private static Map<String, Object> responses(Map<String, Object> paths, Route r) {
        Map<String, Object> operation = map(map(paths, r.path()), r.method().toLowerCase(Locale.ROOT));
        assertThat(operation.get("responses")).as("responses of %s", r).isInstanceOf(Map.class);
        Map<String, Object> out = new LinkedHashMap<>();
        ((Map<?, ?>) operation.get("responses")).forEach((status, response) -> out.put(String.valueOf(status), response));
        return out;
    }

    private static List<Route> allRoutes() {
        List<Route> all = new ArrayList<>(QUERY_ROUTES);
        all.addAll(ADMIN_ROUTES);
        return all;
    }

    private static List<Route> documentedOperations() {
        List<Route> out = new ArrayList<>();
        for (Map.Entry<String, Object> path : map(document, "paths").entrySet()) {
            for (Object key : asMap(path.getValue(), path.getKey()).keySet()) {
                if (HTTP_METHODS.contains(String.valueOf(key))) {
                    out.add(new Route(String.valueOf(key).toUpperCase(Locale.ROOT), path.getKey()));
                }
            }
        }
        return out;
    }

    /** Follows a {@code $ref} to {@code #/components/responses/...}; other responses are returned as they are. */
    private static Map<String, Object> resolve(Map<String, Object> response) {
        Object ref = response.get("$ref");
        if (ref == null) {
            return response;
        }
        String prefix = "#/components/responses/";
        assertThat(String.valueOf(ref)).startsWith(prefix);
        return map(map(map(document, "components"), "responses"), String.valueOf(ref).substring(prefix.length()));
    }

    private static List<String> urls(Map<String, Object> node) {
        List<String> out = new ArrayList<>();
        for (Object server : list(node, "servers")) {
            out.add(String.valueOf(asMap(server, "server").get("url")));
        }
        return out;
    }

    private static Map<String, Object> map(Map<String, Object> parent, String key) {
        assertThat(parent).as("parent of '%s'", key).containsKey(key);
        return asMap(parent.get(key), key);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object node, String what) {
        assertThat(node).as("'%s' is a mapping", what).isInstanceOf(Map.class);
        return (Map<String, Object>) node;
    }

    private static List<?> list(Map<String, Object> parent, String key) {
        assertThat(parent).as("parent of '%s'", key).containsKey(key);
        assertThat(parent.get(key)).as("'%s' is a sequence", key).isInstanceOf(List.class);
        return (List<?>) parent.get(key);
    }
}
