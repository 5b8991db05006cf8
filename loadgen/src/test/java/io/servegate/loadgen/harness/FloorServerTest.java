package io.servegate.loadgen.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.servegate.containers.noop.NoopContainer;
import io.servegate.containers.noop.NoopPredictor;
import io.servegate.loadgen.load.GatewayAnswer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/** The floor server answers a query as the gateway does, from one container call, and refuses what it cannot parse. */
class FloorServerTest {

    @Test
    void answersAQueryWithTheContainersOutputAndRefusesABodyWithoutNumbers() throws Exception {
        try (ModelContainer<float[], String> noop = NoopContainer.builder(TensorType.FLOATS).name("noop").version("1")
                .host(GatewayProcess.HOST).port(0).build().start();
                FloorServer floor = new FloorServer(GatewayProcess.HOST, 0, GatewayProcess.HOST + ":" + noop.port(),
                        "noop")) {
            HttpClient http = HttpClient.create().host(GatewayProcess.HOST).port(floor.port());
            for (int i = 0; i < 3; i++) {
                byte[] ok = post(http, "{\"input\": [1.5, -2, 3e2]}", 200);
                GatewayAnswer answer = GatewayAnswer.parse(200, ok);
                assertThat(answer.isDefault()).isFalse();
                assertThat(answer.output()).isEqualTo("\"" + NoopPredictor.OUTPUT + "\"");
            }
            post(http, "{\"input\": [\"x\"]}", 400);
            post(http, "{\"inputs\": [1]}", 400);
        }
    }

    @Test
    void sendsAnOctetStreamBodyAsOneBytesInput() throws Exception {
        try (ModelContainer<byte[], String> noop = NoopContainer.builder(TensorType.BYTES).name("noop").version("1")
                .host(GatewayProcess.HOST).port(0).build().start();
                FloorServer floor = new FloorServer(GatewayProcess.HOST, 0, GatewayProcess.HOST + ":" + noop.port(),
                        "noop")) {
            HttpClient http = HttpClient.create().host(GatewayProcess.HOST).port(floor.port())
                    .headers(h -> h.set("Content-Type", "application/octet-stream"));
            GatewayAnswer answer = GatewayAnswer.parse(200, post(http, "\u0000\u00ff not JSON", 200));
            assertThat(answer.isDefault()).isFalse();
            assertThat(answer.output()).isEqualTo("\"" + NoopPredictor.OUTPUT + "\"");
        }
    }

    @Test
    void parsesTheInputArrayAndSkipsOtherFields() throws IOException {
        assertThat(FloorServer.parseInput(stream("{\"uid\": {\"a\": [1]}, \"input\": [1, 2.5, -3]}")))
                .containsExactly(1f, 2.5f, -3f);
        float[] many = FloorServer.parseInput(stream("{\"input\": [" + "1,".repeat(99) + "1]}"));
        assertThat(many).hasSize(100);
        assertThatThrownBy(() -> FloorServer.parseInput(stream("{\"input\": []}"))).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> FloorServer.parseInput(stream("[1]"))).isInstanceOf(IOException.class);
    }

    private static ByteArrayInputStream stream(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] post(HttpClient http, String body, int status) {
        return http.post().uri("/noop/predict")
                .send(Mono.just(Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8))))
                .responseSingle((response, content) -> {
                    assertThat(response.status().code()).as(body).isEqualTo(status);
                    return content.asByteArray();
                })
                .block(Duration.ofSeconds(10));
    }
}
