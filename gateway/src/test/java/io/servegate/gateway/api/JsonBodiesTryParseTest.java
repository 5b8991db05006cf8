package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Model outputs nested as JSON in answers: small integers take a shortcut past the parser, and
 * every output comes out exactly as the parser would have made it (or as text when it is not JSON).
 */
class JsonBodiesTryParseTest {

    private static final ObjectMapper MAPPER = JsonMapper.builder().build();
    private final JsonBodies bodies = new JsonBodies(MAPPER);

    @Test
    void everyOutputNestsAsTheParserWouldNestIt() {
        for (String output : List.of("0", "7", "-1", "-0", "123456789", "999999999", "-999999999", "1234567890",
                "2147483648", "0.5", "1e3", "[1,2]", "{\"a\":1}", "\"x\"", "true", "null")) {
            JsonNode parsed = MAPPER.readTree(output);
            JsonNode nested = bodies.tryParse(output);
            assertThat(nested).as(output).isEqualTo(parsed);
            assertThat(MAPPER.writeValueAsString(nested)).as(output).isEqualTo(MAPPER.writeValueAsString(parsed));
        }
    }

    @Test
    void textThatIsNotOneJsonValueStaysText() {
        for (String output : List.of("", "-", "007", "00", "-01", "1a", "1 2", "cat", "+1", "1-")) {
            assertThat(bodies.tryParse(output)).as(output).isNull();
        }
    }
}
