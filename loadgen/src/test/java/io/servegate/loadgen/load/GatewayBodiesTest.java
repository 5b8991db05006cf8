package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Request bodies, answers and their tally: what the gateway benchmarks send and read. */
class GatewayBodiesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void queryBodiesAreValidJsonWithDistinctInputsOfTheGivenLength() throws Exception {
        RandomInputs inputs = new RandomInputs(784);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            byte[] body = inputs.queryBody();
            JsonNode n = JSON.readTree(body);
            assertThat(n.get("input").size()).isEqualTo(784);
            for (JsonNode x : n.get("input")) {
                assertThat(x.isNumber()).isTrue();
                assertThat(x.doubleValue()).isBetween(0.0, 1.0);
            }
            assertThat(seen.add(new String(body, StandardCharsets.US_ASCII))).isTrue();
        }
        assertThat(new String(new RandomInputs(2).queryBody(), StandardCharsets.US_ASCII))
                .matches("\\{\"input\":\\[0\\.\\d{6},0\\.\\d{6}]}");
    }

    @Test
    void batchQueryBodiesHoldTheGivenRowsOfDistinctInputs() throws Exception {
        JsonNode batch = JSON.readTree(new RandomInputs(8).batchQueryBody(250)).get("input_batch");
        assertThat(batch.size()).isEqualTo(250);
        Set<String> rows = new HashSet<>();
        for (JsonNode row : batch) {
            assertThat(row.size()).isEqualTo(8);
            for (JsonNode x : row) {
                assertThat(x.doubleValue()).isBetween(0.0, 1.0);
            }
            rows.add(row.toString());
        }
        assertThat(rows).hasSize(250);
        assertThat(new String(new RandomInputs(1).batchQueryBody(2), StandardCharsets.US_ASCII))
                .matches("\\{\"input_batch\":\\[\\[0\\.\\d{6}],\\[0\\.\\d{6}]]}");
        assertThatThrownBy(() -> new RandomInputs(8).batchQueryBody(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void vectorsAreDistinctAndInTheUnitInterval() {
        RandomInputs inputs = new RandomInputs(8);
        float[] a = inputs.vector();
        float[] b = inputs.vector();
        assertThat(a).hasSize(8).isNotEqualTo(b);
        for (float x : a) {
            assertThat(x).isBetween(0f, 1f);
        }
    }

    @Test
    void answersAreParsedAndCounted() {
        GatewayAnswer prediction = GatewayAnswer.parse(200,
                "{\"query_id\":1,\"output\":\"0\",\"default\":false}".getBytes(StandardCharsets.UTF_8));
        GatewayAnswer fallback = GatewayAnswer.parse(200, ("{\"query_id\":2,\"output\":-1,\"default\":true,"
                + "\"default_explanation\":\"no prediction arrived within the latency SLO\"}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(prediction).isEqualTo(new GatewayAnswer("\"0\"", false, null));
        assertThat(fallback.isDefault()).isTrue();
        assertThat(fallback.explanation()).isEqualTo("no prediction arrived within the latency SLO");

        AnswerTally tally = new AnswerTally(22_000_000);
        tally.accept(prediction, 1_000_000);
        tally.accept(prediction, 23_000_000);
        tally.accept(fallback, 20_500_000);
        tally.accept(fallback, 22_000_001);
        AnswerTally.Counts c = tally.counts();
        assertThat(c.predictions()).isEqualTo(2);
        assertThat(c.defaults()).isEqualTo(2);
        assertThat(c.late()).isEqualTo(2);
        // goodput: the one prediction within 22 ms; a timely default is no good answer
        assertThat(c.goodput()).isEqualTo(1);
        assertThat(c.lateThresholdMs()).isEqualTo(22.0);
        assertThat(c.defaultsByExplanation()).containsExactly(
                java.util.Map.entry("no prediction arrived within the latency SLO", 2L));
    }

    @Test
    void oipInferBodiesAreOneFp32RowAndTheirAnswersPredictions() throws Exception {
        JsonNode body = new ObjectMapper().readTree(new RandomInputs(5).oipInferBody());
        JsonNode tensor = body.path("inputs").get(0);
        assertThat(body.path("inputs").size()).isEqualTo(1);
        assertThat(tensor.path("name").asText()).isEqualTo("input");
        assertThat(tensor.path("datatype").asText()).isEqualTo("FP32");
        assertThat(tensor.path("shape").toString()).isEqualTo("[1,5]");
        assertThat(tensor.path("data").size()).isEqualTo(5);
        tensor.path("data").forEach(v -> assertThat(v.doubleValue()).isBetween(0.0, 1.0));

        GatewayAnswer a = GatewayAnswer.parseOipInfer(200, ("{\"model_name\":\"m\",\"outputs\":[{\"name\":"
                + "\"output\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"7\"]}]}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(a).isEqualTo(new GatewayAnswer("[\"7\"]", false, null));
        assertThatThrownBy(() -> GatewayAnswer.parseOipInfer(504, "{\"error\":\"inference failed\"}"
                .getBytes(StandardCharsets.UTF_8))).hasMessageContaining("HTTP 504");
        assertThatThrownBy(() -> GatewayAnswer.parseOipInfer(200, "{}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not an infer response");
    }

    @Test
    void aContainersOwnAnswerIsAPrediction() {
        AnswerTally tally = new AnswerTally(10_000_000);
        tally.accept(java.util.List.of("3"), 9_000_000);
        tally.accept(java.util.List.of("3"), 11_000_000);
        AnswerTally.Counts c = tally.counts();
        assertThat(c.predictions()).isEqualTo(2);
        assertThat(c.goodput()).isEqualTo(1);
        assertThat(c.defaults()).isZero();
    }

    @Test
    void errorsAndNonAnswersFail() {
        assertThatThrownBy(() -> GatewayAnswer.parse(404, "{\"error\":\"unknown\"}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("HTTP 404").hasMessageContaining("unknown");
        assertThatThrownBy(() -> GatewayAnswer.parse(200, "{\"x\":1}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not a query answer");
        assertThatThrownBy(() -> GatewayAnswer.parse(200, "<html>".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not JSON");
    }
}
