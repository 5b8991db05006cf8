package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.registry.ModelProfile;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.testsupport.JavaCommand;
import io.servegate.sim.cli.SimCommand;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The profiler and the planner through a gateway with the process container manager and emulated
 * containers (a batch of b sleeps β + α·b): profile_model stores each model's β and α as measured,
 * its errors are 4xx naming the cause; {@code bin/sim plan --gateway --dry-run} prints a hand-checked
 * plan and changes nothing; {@code bin/sim plan --gateway} applies InferLine's plan, after which the
 * stages' replicas, batch caps and deadlines are the plan's; a plan the gateway cannot apply is
 * refused whole.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.admin.token=" + PipelinePlanEndToEndTest.TOKEN,
        "servegate.containers.probe-interval=250ms", "servegate.containers.readiness-timeout=120s"})
class PipelinePlanEndToEndTest {

    static final String TOKEN = "plan-e2e-token-81d0";
    private static final List<String> COMMAND = JavaCommand.inTempDirectory("plan-e2e",
            "io.servegate.containers.emulated.EmulatedContainer");

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @Autowired
    Registry registry;

    private final HttpClient http = HttpClient.newHttpClient();

    @DynamicPropertySource
    static void allowTheContainerCommand(DynamicPropertyRegistry properties) {
        JavaCommand.allow(properties, COMMAND);
    }

    private String url() {
        return "http://127.0.0.1:" + adminServer.port();
    }

    @Test
    void profilesEmulatedModelsThenPlansAndAppliesAPipeline() throws Exception {
        deploy("plan-pre", 2, 0.5, 1);
        deploy("plan-cls", 6, 2, 2);
        awaitDeployment("plan-pre", d -> d.get("ready_replicas").intValue() == 1);
        awaitDeployment("plan-cls", d -> d.get("ready_replicas").intValue() == 2);
        awaitAvailable("plan-pre", 1);
        awaitAvailable("plan-cls", 2);
        call("add_model", Map.of("model_name", "plan-idle", "model_version", "1", "input_type", "floats"), 200);

        // refused, each with its cause
        assertThat(cause(call("profile_model", Map.of("model_name", "nope"), 404))).contains("unknown model 'nope'");
        assertThat(cause(call("profile_model", Map.of("model_name", "plan-pre", "model_version", "9"), 404)))
                .contains("unknown model 'plan-pre:9'");
        assertThat(cause(call("profile_model", Map.of("model_name", "plan-idle"), 409)))
                .contains("'plan-idle:1' has no available replica");
        assertThat(cause(call("profile_model", Map.of("model_name", "plan-pre", "max_batch", 0), 400)))
                .contains("'max_batch' must be in 1..256");
        assertThat(cause(call("profile_model", Map.of("model_name", "plan-pre", "samples", "many"), 400)))
                .contains("'samples' must be an integer");
        assertThat(cause(call("profile_model", Map.of("model_name", "plan-pre", "batch", 4), 400)))
                .contains("unknown field 'batch'");
        assertThat(cause(call("profile_model", Map.of("model_name", "plan-pre", "hardware", "cuda"), 409)))
                .contains("runs on hardware 'cpu-1t', not 'cuda'");

        // one run at a time per model: of two calls sent together, the one that comes second arrives while
        // the first sleeps through its batches (about a second), and is refused
        Map<String, Object> cls = Map.of("model_name", "plan-cls", "max_batch", 16, "samples", 10, "warmup", 2);
        CompletableFuture<HttpResponse<String>> one = send("profile_model", cls);
        CompletableFuture<HttpResponse<String>> two = send("profile_model", cls);
        List<HttpResponse<String>> both = List.of(one.get(), two.get());
        assertThat(both).extracting(HttpResponse::statusCode).containsExactlyInAnyOrder(200, 409);
        HttpResponse<String> done = both.stream().filter(r -> r.statusCode() == 200).findFirst().orElseThrow();
        HttpResponse<String> refused = both.stream().filter(r -> r.statusCode() == 409).findFirst().orElseThrow();
        assertThat(cause(json.readTree(refused.body()))).contains("model 'plan-cls' is being profiled already");
        assertEmulated(json.readTree(done.body()), 6, 2);
        JsonNode pre = call("profile_model", Map.of("model_name", "plan-pre", "max_batch", 16, "samples", 10,
                "warmup", 2), 200);
        assertEmulated(pre, 2, 0.5);
        assertThat(pre.get("hardware").asString()).isEqualTo("cpu-1t");
        assertThat(pre.get("replica_id").asString()).startsWith("plan-pre-1-");

        JsonNode stored = call("get_profiles", Map.of("model_name", "plan-cls"), 200);
        assertThat(stored).hasSize(1);
        assertThat(stored.get(0).get("batches")).isEqualTo(json.readTree(done.body()).get("batches"));
        assertThat(cause(call("get_profiles", Map.of("model_name", "nope"), 404))).contains("unknown model 'nope'");

        call("add_pipeline", json.readValue("""
                {"name": "plan-two", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 200000,
                 "stages": [{"name": "pre", "model": "plan-pre"}, {"name": "cls", "model": "plan-cls"}],
                 "edges": [{"from": "pre", "to": "cls"}]}
                """, Map.class), 200);
        Map<String, Object> good = planBody("plan-two", Map.of(
                "pre", stage(1, 8, "cpu-1t", 50_000), "cls", stage(1, 4, "cpu-1t", 150_000)));

        // a plan the gateway cannot apply is refused whole
        assertThat(cause(call("apply_pipeline_plan", planBody("nope", Map.of()), 404)))
                .contains("unknown pipeline 'nope'");
        assertThat(cause(call("apply_pipeline_plan", planBody("plan-two", Map.of(
                "pre", stage(1, 8, "cpu-1t", 50_000))), 400))).contains("stage 'cls' is missing");
        assertThat(cause(call("apply_pipeline_plan", planBody("plan-two", Map.of(
                "pre", stage(1, 8, "cpu-1t", 50_000), "cls", stage(1, 4, "cpu-1t", 150_000),
                "rank", stage(1, 1, "cpu-1t", 1))), 400))).contains("has no stage 'rank'");
        assertThat(cause(call("apply_pipeline_plan", planBody("plan-two", Map.of(
                "pre", stage(1, 0, "cpu-1t", 50_000), "cls", stage(1, 4, "cpu-1t", 150_000))), 400)))
                .contains("'stages.pre.max_batch_size' must be an integer in 1..256");
        assertThat(cause(call("apply_pipeline_plan", planBody("plan-two", Map.of(
                "pre", stage(1, 8, "cpu-1t", 50_000), "cls", stage(1, 4, "cuda", 150_000))), 409)))
                .contains("stage 'cls' is planned on hardware 'cuda' but model version 'plan-cls:1' runs on 'cpu-1t'");
        assertThat(cause(call("apply_pipeline_plan", planBody("plan-two", Map.of(
                "pre", stage(1, 8, "cpu-1t", 100_000), "cls", stage(1, 4, "cpu-1t", 150_000))), 400)))
                .contains("add up to");
        JsonNode unchanged = call("get_pipeline", Map.of("name", "plan-two"), 200);
        assertThat(unchanged.get("planned").booleanValue()).isFalse();
        awaitDeployment("plan-cls", d -> d.get("num_replicas").intValue() == 2
                && d.get("max_batch_size").intValue() == 256);

        // the hand-checked dry run: one stage, cpu (10 ms + 1 ms per query, 0.05/h) or gpu (2 ms, 0.90/h),
        // SLO 30 ms, 5 queries/s: one cpu replica meets the SLO and nothing is cheaper
        call("add_model", Map.of("model_name", "plan-solo-m", "model_version", "1", "input_type", "floats"), 200);
        registry.putProfile(handMade("plan-solo-m", "cpu", 10, 1)).block();
        registry.putProfile(handMade("plan-solo-m", "gpu", 2, 0)).block();
        call("add_pipeline", json.readValue("""
                {"name": "plan-solo", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 30000,
                 "stages": [{"name": "only", "model": "plan-solo-m"}]}
                """, Map.class), 200);
        Path dir = Files.createTempDirectory("plan-e2e-sim");
        Path costs = Files.writeString(dir.resolve("costs.json"),
                "{\"per_replica_hour\": {\"cpu\": 0.05, \"gpu\": 0.90, \"cpu-1t\": 0.05}}");
        JsonNode dry = plan(dir.resolve("dry.json"), "--pipeline", "plan-solo", "--costs", costs.toString(),
                "--rate", "5", "--duration-s", "20", "--dry-run");
        JsonNode solo = dry.get("plans").get(0);
        assertThat(solo.get("cost_per_hour").asDouble()).isEqualTo(0.05);
        assertThat(solo.get("stages").get(0).get("hardware").asString()).isEqualTo("cpu");
        assertThat(solo.get("stages").get(0).get("replicas").intValue()).isEqualTo(1);
        // one stage: its budget is the whole SLO (rounded down to microseconds)
        assertThat(solo.get("stages").get(0).get("deadline_micros").longValue()).isBetween(29_999L, 30_000L);
        assertThat(dry.get("apply_request").get("stages").get("only").get("hardware").asString()).isEqualTo("cpu");
        assertThat(dry.has("applied")).isFalse();
        assertThat(call("get_pipeline", Map.of("name", "plan-solo"), 200).get("planned").booleanValue()).isFalse();

        // planned from the stored profiles and applied
        JsonNode applied = plan(dir.resolve("applied.json"), "--pipeline", "plan-two", "--costs", costs.toString(),
                "--rate", "20", "--duration-s", "10");
        JsonNode request = applied.get("apply_request").get("stages");
        assertThat(applied.get("applied").get("planned").booleanValue()).isTrue();
        JsonNode pipeline = call("get_pipeline", Map.of("name", "plan-two"), 200);
        assertThat(pipeline.get("planned").booleanValue()).isTrue();
        for (String stageName : List.of("pre", "cls")) {
            JsonNode planned = request.get(stageName);
            String model = "plan-" + stageName;
            assertThat(pipeline.get("stage_deadlines_micros").get(stageName).longValue() > 0).isTrue();
            JsonNode stage = stageOf(pipeline, stageName);
            assertThat(stage.get("deadline_micros").longValue()).isEqualTo(planned.get("deadline_micros").longValue());
            awaitDeployment(model, d -> d.get("num_replicas").intValue() == planned.get("replicas").intValue()
                    && d.get("ready_replicas").intValue() == planned.get("replicas").intValue()
                    && d.get("max_batch_size").intValue() == planned.get("max_batch_size").intValue());
        }
        // at 20 queries/s one replica of the classifier (6 ms + 2 ms per query) suffices: the second goes
        assertThat(request.get("cls").get("replicas").intValue()).isEqualTo(1);
        assertThat(request.get("cls").get("max_batch_size").intValue()).isLessThan(256);
    }

    private void deploy(String model, double betaMs, double alphaMs, int replicas) throws Exception {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", model);
        body.put("model_version", "1");
        body.put("input_type", "floats");
        body.put("command", COMMAND);
        body.put("num_replicas", replicas);
        body.put("hardware", "cpu-1t");
        body.put("env", Map.of("BETA_MS", Double.toString(betaMs), "ALPHA_MS", Double.toString(alphaMs)));
        call("deploy_model", body, 200);
    }

    /** The emulated β + α·b as measured, within a generous tolerance for a loaded machine. */
    private static void assertEmulated(JsonNode profile, double betaMs, double alphaMs) {
        assertThat(profile.get("round_trip").booleanValue()).isFalse();
        JsonNode batches = profile.get("batches");
        assertThat(batches).extracting(b -> b.get("batch_size").intValue()).containsExactly(1, 2, 4, 8, 16);
        for (JsonNode b : batches) {
            double expected = betaMs + alphaMs * b.get("batch_size").intValue();
            assertThat(b.get("mean_ms").asDouble()).isBetween(expected * 0.9, expected * 1.5 + 3);
            assertThat(b.get("p99_ms").asDouble()).isGreaterThanOrEqualTo(b.get("mean_ms").asDouble());
        }
        double slope = (batches.get(4).get("mean_ms").asDouble() - batches.get(0).get("mean_ms").asDouble()) / 15;
        assertThat(slope).isCloseTo(alphaMs, within(alphaMs * 0.5 + 0.2));
    }

    private static ModelProfile handMade(String model, String hardware, double betaMs, double alphaMs) {
        List<ModelProfile.BatchLatency> batches = new java.util.ArrayList<>();
        for (int b = 1; b <= 64; b *= 2) {
            batches.add(new ModelProfile.BatchLatency(b, betaMs + alphaMs * b, betaMs + alphaMs * b));
        }
        return new ModelProfile(model, "1", hardware, "hand", "-", Instant.parse("2026-11-24T10:00:00Z"), 1, false,
                batches);
    }

    private static Map<String, Object> stage(int replicas, int maxBatch, String hardware, long deadlineMicros) {
        return Map.of("replicas", replicas, "max_batch_size", maxBatch, "hardware", hardware,
                "deadline_micros", deadlineMicros);
    }

    private static Map<String, Object> planBody(String pipeline, Map<String, Object> stages) {
        return Map.of("pipeline", pipeline, "stages", stages);
    }

    private static JsonNode stageOf(JsonNode pipeline, String name) {
        for (JsonNode s : pipeline.get("stages")) {
            if (s.get("name").asString().equals(name)) {
                return s;
            }
        }
        throw new AssertionError("no stage " + name + " in " + pipeline);
    }

    /** {@code bin/sim plan --gateway URL …}: its exit code must be 0; its JSON summary. */
    private JsonNode plan(Path out, String... args) throws IOException {
        List<String> all = new java.util.ArrayList<>(List.of("plan", "--gateway", url(), "--token", TOKEN,
                "--json", out.toString()));
        all.addAll(List.of(args));
        int exit = new CommandLine(new SimCommand()).execute(all.toArray(String[]::new));
        assertThat(exit).as("bin/sim %s", all).isZero();
        return json.readTree(Files.readString(out));
    }

    private static String cause(JsonNode error) {
        return error.get("cause").asString();
    }

    private CompletableFuture<HttpResponse<String>> send(String endpoint, Object body) throws IOException {
        HttpRequest r = HttpRequest.newBuilder(URI.create(url() + "/admin/" + endpoint))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .timeout(Duration.ofMinutes(2))
                .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body))).build();
        return http.sendAsync(r, HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode call(String endpoint, Object body, int status) throws Exception {
        HttpResponse<String> response = send(endpoint, body).get();
        assertThat(response.statusCode()).as("%s -> %s", endpoint, response.body()).isEqualTo(status);
        return json.readTree(response.body());
    }

    /** Waits until the gateway sends batches to {@code count} replicas of the model (after their warm-up). */
    private void awaitAvailable(String model, int count) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < until) {
            last = call("get_all_containers", Map.of(), 200);
            int available = 0;
            for (JsonNode c : last) {
                if (c.get("model_name").asString().equals(model) && c.get("available").booleanValue()) {
                    available++;
                }
            }
            if (available == count) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("timed out waiting for " + count + " available replicas of " + model + ": " + last);
    }

    private JsonNode awaitDeployment(String model, Predicate<JsonNode> condition) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < until) {
            HttpRequest r = HttpRequest.newBuilder(URI.create(url() + "/admin/get_deployments"))
                    .header("Authorization", "Bearer " + TOKEN).GET().build();
            for (JsonNode d : json.readTree(http.send(r, HttpResponse.BodyHandlers.ofString()).body())) {
                last = d;
                if (d.get("model_name").asString().equals(model) && condition.test(d)) {
                    return d;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("timed out waiting for the deployment of " + model + ": " + last);
    }
}
