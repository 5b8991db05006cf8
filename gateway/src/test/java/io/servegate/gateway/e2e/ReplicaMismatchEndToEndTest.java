package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.JavaCommand;
import io.servegate.oip.client.ContainerClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * A model registered under one name whose container serves another: the deploy that waits for
 * its replicas fails within seconds naming what differs (not after the one-minute readiness
 * timeout), and {@code get_deployments} says the same while the replica is restarted.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.admin.token=" + ReplicaMismatchEndToEndTest.TOKEN,
        "servegate.containers.readiness-timeout=60s"})
class ReplicaMismatchEndToEndTest {

    static final String TOKEN = "replica-mismatch-e2e-token-51c0";
    /** The emulated container serving the model {@code mylinear}, whatever it is registered as. */
    private static final List<String> COMMAND = JavaCommand.inTempDirectory("replica-mismatch-e2e",
            ContainerProcess.EMULATED, "--name", "mylinear");

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @DynamicPropertySource
    static void allowTheContainerCommand(DynamicPropertyRegistry properties) {
        JavaCommand.allow(properties, COMMAND);
    }

    @Test
    void aReplicaServingAnotherNameFailsTheDeployWithinSecondsNamingWhatDiffers() throws Exception {
        CompletableFuture<HttpResponse<String>> answer = postAsync("deploy_model", Map.of("model_name", "wrongname",
                "model_version", "1", "input_type", "floats", "command", COMMAND, "num_replicas", 1,
                "wait_ready_seconds", 60));
        // the clock starts when the container answers ServerReady (its JVM's start is not the gateway's doing)
        long serving = awaitServing(answer);
        HttpResponse<String> deploy = answer.get(90, TimeUnit.SECONDS);
        long answered = System.nanoTime();

        assertThat(deploy.statusCode()).as(deploy.body()).isEqualTo(502);
        assertThat(answered - serving).as("named within 5 s of the container serving; the readiness timeout is 60 s")
                .isLessThan(Duration.ofSeconds(5).toNanos());
        JsonNode body = json.readTree(deploy.body());
        assertThat(body.path("error").asString()).isEqualTo("deployment not ready");
        assertThat(body.path("cause").asString()).contains("replica wrongname-1-p0",
                "does not serve the registered model version", "ModelReady(wrongname, version 1)", "NOT_FOUND",
                "this container serves 'mylinear'");
        assertThat(body.path("deployment").path("ready_replicas").asInt()).isZero();

        JsonNode replica = replica();
        assertThat(replica.path("container_id").asString()).isEqualTo("wrongname-1-p0");
        assertThat(replica.path("detail").asString()).contains("wrongname", "mylinear");
    }

    @Test
    void aReplicaAddedByAddressThatServesAnotherNameTakesNoQueries() throws Exception {
        try (ContainerProcess mylinear = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "mylinear");
                ContainerProcess right = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "right")) {
            for (String[] m : new String[][] {{"misnamed", mylinear.address()}, {"right", right.address()}}) {
                assertThat(post("add_model", Map.of("model_name", m[0], "model_version", "1", "input_type", "floats"))
                        .statusCode()).isEqualTo(200);
                assertThat(post("add_container", Map.of("model_name", m[0], "model_version", "1", "address", m[1]))
                        .statusCode()).isEqualTo(200);
            }
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!available("right")) {
                assertThat(System.nanoTime()).as("the right replica became available").isLessThan(until);
                Thread.sleep(50);
            }
            Thread.sleep(2000); // both containers serve; the misnamed one is checked every second
            assertThat(available("misnamed")).as("a replica whose batches would all fail takes none").isFalse();
        }
    }

    private boolean available(String model) throws Exception {
        HttpResponse<String> r = post("get_all_containers", Map.of());
        for (JsonNode c : json.readTree(r.body())) {
            if (c.path("model_name").asString().equals(model)) {
                return c.path("available").asBoolean();
            }
        }
        return false;
    }

    private HttpResponse<String> post(String endpoint, Map<String, ?> body) throws Exception {
        return postAsync(endpoint, body).get(90, TimeUnit.SECONDS);
    }

    /**
     * When the replica's container first answered ServerReady true, as this test saw it; the time
     * of the answer if the gateway stopped the replica before this test saw it serve.
     */
    private long awaitServing(CompletableFuture<?> answer) throws Exception {
        while (!answer.isDone()) {
            String address = replica().path("address").asString(null);
            if (address != null) {
                try (ContainerClient c = ContainerClient.connect(address)) {
                    if (Boolean.TRUE.equals(c.serverReady(Duration.ofSeconds(1)).get())) {
                        return System.nanoTime();
                    }
                } catch (ExecutionException notYet) {
                    // not listening yet
                }
            }
            Thread.sleep(20);
        }
        return System.nanoTime();
    }

    private JsonNode replica() throws Exception {
        HttpResponse<String> deployments = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + adminServer.port() + "/admin/get_deployments")).header("Authorization", "Bearer " + TOKEN).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
        return json.readTree(deployments.body()).path(0).path("replicas").path(0);
    }

    private CompletableFuture<HttpResponse<String>> postAsync(String endpoint, Map<String, ?> body) {
        return http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminServer.port() + "/admin/"
                        + endpoint)).timeout(Duration.ofSeconds(90)).header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
