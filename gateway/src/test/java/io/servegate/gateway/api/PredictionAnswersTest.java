package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.Prediction;
import java.io.ByteArrayOutputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * An answer written field by field is byte for byte what serialising the map of it made:
 * predictions whose output is JSON or text, defaults with and without an explanation, and an
 * ensemble's figures.
 */
class PredictionAnswersTest {

    private static final ObjectMapper MAPPER = JsonMapper.builder().build();
    private final JsonBodies bodies = new JsonBodies(MAPPER);

    @Test
    void writtenAsTheMapOfItWasSerialised() {
        List<Prediction> answers = List.of(Prediction.of("0"), Prediction.of("7"), Prediction.of("[0.25,1e3]"),
                Prediction.of("{\"label\":\"cat\",\"p\":0.9}"), Prediction.of("cat"), Prediction.of("\"x\""),
                Prediction.of(""), Prediction.of("caf\u00e9 \"quoted\"\n"),
                Prediction.ofDefault("-1", DefaultReason.DEADLINE, null),
                Prediction.ofDefault("none", DefaultReason.CONTAINER_ERROR, "replica r1: UNKNOWN (boom)"),
                Prediction.of("3").withEnsemble(0.75, 3, 4),
                Prediction.ofDefault("0", DefaultReason.DEADLINE, "late").withEnsemble(0.0, 0, 2));
        long queryId = 0;
        for (Prediction p : answers) {
            long id = queryId++ * 1_000_000_007L;
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (JsonGenerator g = MAPPER.createGenerator(out)) {
                PredictionAnswers.write(g, bodies, p, id);
            }
            assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8)).as(p.toString())
                    .isEqualTo(MAPPER.writeValueAsString(asMap(p, id)));
        }
    }

    /** The map the query handler serialised before. */
    private Map<String, Object> asMap(Prediction p, long queryId) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("query_id", queryId);
        JsonNode nested = bodies.tryParse(p.output());
        out.put("output", nested != null ? nested : p.output());
        out.put("default", p.isDefault());
        if (p.isDefault()) {
            out.put("default_explanation", p.explanation());
        }
        if (p.selected() >= 0) {
            out.put("confidence", p.confidence());
            out.put("models_answered", p.answered());
            out.put("models_selected", p.selected());
        }
        return out;
    }
}
