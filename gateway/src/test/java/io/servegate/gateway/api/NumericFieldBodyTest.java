package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.oip.client.TensorType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The streaming read of a body's numeric input gives exactly what the tree path gives, or
 * nothing (and the tree path then reports the error).
 */
class NumericFieldBodyTest {

    private static final ObjectMapper MAPPER = JsonMapper.builder().build();
    private static final InputParser INPUTS = new InputParser(4096);
    private static final List<TensorType<?>> NUMERIC = List.of(TensorType.FLOATS, TensorType.DOUBLES, TensorType.INTS);

    @Test
    void readsTheNumbersAndKeepsTheOtherFields() {
        NumericFieldBody body = read("{\"uid\":7,\"input\":[1,-2.5,3e2,0.1],\"label\":\"3\",\"x\":{\"y\":[1]}}");

        assertThat(body).isNotNull();
        assertThat(body.numbers()).containsExactly(1, -2.5, 300, 0.1);
        assertThat(body.integral()).isFalse();
        assertThat(body.others()).isEqualTo(MAPPER.readTree("{\"uid\":7,\"label\":\"3\",\"x\":{\"y\":[1]}}"));
        assertThat(read("{\"uid\":null,\"input\":[1],\"context\":\"a\",\"f\":false,\"n\":[]}").others())
                .isEqualTo(MAPPER.readTree("{\"uid\":null,\"context\":\"a\",\"f\":false,\"n\":[]}"));
        assertThat(read("{\"input\":[1,2,-3]}").integral()).isTrue();
        assertThat(read("{\"input\":[1,3000000000]}").integral()).isFalse();
    }

    /** Fashion-MNIST-like pixels, integers, float extremes: every numeric type converts as the tree path does. */
    @Test
    void convertsEveryNumericTypeExactlyAsTheTreePath() {
        Random random = new Random(11);
        for (int c = 0; c < 300; c++) {
            StringBuilder json = new StringBuilder("{\"label\":1,\"input\":[");
            int n = 1 + random.nextInt(800);
            for (int i = 0; i < n; i++) {
                json.append(i == 0 ? "" : ",").append(switch (c % 5) {
                    case 0 -> Float.toString(random.nextFloat());
                    case 1 -> Integer.toString(random.nextInt());
                    case 2 -> Double.toString(random.nextGaussian() * 1e30);
                    case 3 -> Double.toString(random.nextDouble() * 1e-40);
                    default -> random.nextInt(3) + "." + random.nextInt(1000) + "e" + (random.nextInt(20) - 10);
                });
            }
            String text = json.append("]}").toString();
            NumericFieldBody body = read(text);
            assertThat(body).as(text).isNotNull();
            JsonNode tree = MAPPER.readTree(text).get("input");
            for (TensorType<?> type : NUMERIC) {
                Object fast = INPUTS.fromNumbers(type, body, -1);
                Object slow;
                try {
                    slow = INPUTS.parse(type, tree, "input", -1);
                } catch (ApiException e) {
                    assertThat(fast).as("%s rejected by the tree path: %s", type, e.getMessage()).isNull();
                    continue;
                }
                assertThat(fast).as("%s of case %d", type, c).isNotNull();
                assertThat(List.of(fast)).as("%s of case %d", type, c).containsExactly(slow);
            }
        }
    }

    @Test
    void anythingButAFlatArrayOfNumbersIsLeftToTheTreePath() {
        for (String text : List.of("[1,2]", "{\"label\":1}", "{\"input\":\"aGk=\"}", "{\"input\":[]}",
                "{\"input\":[1,[2]]}", "{\"input\":[1,\"2\"]}", "{\"input\":[1,null]}", "{\"input\":[1],\"input\":[2]}",
                "{\"input\":[1,2}", "{\"input\":[1]} {}", "{\"input\":[1]")) {
            assertThat(read(text)).as(text).isNull();
        }
    }

    @Test
    void whitespaceAndFieldsAfterTheArrayAreReadAsJacksonReadsThem() {
        NumericFieldBody body = read(" {\n\t\"input\" : [ 1 ,\r\n-0 , 2.5e-3 ] ,\n \"label\" : \"é\" , \"x\":[1,{\"y\":2}] }\n ");
        assertThat(body).isNotNull();
        assertThat(body.numbers()).containsExactly(1, -0.0, 2.5e-3);
        assertThat(body.integral()).isFalse();
        assertThat(body.others()).isEqualTo(MAPPER.readTree("{\"label\":\"é\",\"x\":[1,{\"y\":2}]}"));
        assertThat(read("{\"ü\":\"ß\",\"input\":[-0,7]}").others()).isEqualTo(MAPPER.readTree("{\"ü\":\"ß\"}"));
        assertThat(read("{\"input\":[-0,7]}").integral()).isTrue();
        assertThat(read("{\"input\":[2147483647,-2147483648]}").integral()).isTrue();
        assertThat(read("{\"input\":[-2147483649]}").integral()).isFalse();
        assertThat(read("{\"input\":[1.0]}").integral()).isFalse();
    }

    /** What strict JSON does not allow is not read here, whether the tree path then rejects it or not. */
    @Test
    void numbersAndSeparatorsOutsideStrictJsonAreLeftToTheTreePath() {
        for (String text : List.of("{\"input\":[01]}", "{\"input\":[+1]}", "{\"input\":[1.]}",
                "{\"input\":[.5]}", "{\"input\":[1e]}", "{\"input\":[1e+]}", "{\"input\":[-]}",
                "{\"input\":[NaN]}", "{\"input\":[1,]}", "{\"input\":[,1]}", "{\"input\":[1 2]}",
                "{\"input\":[1],}", "{\"input\":[1],\"a\"}", "{\"input\":[1],\"a\":1,}",
                "{\"input\":[1]}}", "{\"input\":[1],\"input\":[2]}", "{\"input\":[1],\"a\":1,\"input\":[2]}",
                "{\"input\":[1]\"a\":1}", "{\"input\":[1] x}", "{\"input\":[1],\u00a0\"a\":1}")) {
            assertThat(read(text)).as(text).isNull();
        }
    }

    /** Checks the tree path would fail are failed here too (null), so that it words the error. */
    @Test
    void conversionsTheTreePathRejectsGiveNothing() {
        assertThat(INPUTS.fromNumbers(TensorType.FLOATS, read("{\"input\":[1e39]}"), -1)).isNull();
        assertThatThrownBy(() -> INPUTS.parse(TensorType.FLOATS, MAPPER.readTree("[1e39]"), "input", -1))
                .hasMessageContaining("out of the float range");
        assertThat(INPUTS.fromNumbers(TensorType.INTS, read("{\"input\":[1.5]}"), -1)).isNull();
        assertThat(INPUTS.fromNumbers(TensorType.DOUBLES, read("{\"input\":[1e400]}"), -1)).isNull();
        assertThat(INPUTS.fromNumbers(TensorType.FLOATS, read("{\"input\":[1,2,3]}"), 4)).isNull();
        assertThat(new InputParser(2).fromNumbers(TensorType.FLOATS, read("{\"input\":[1,2,3]}"), -1)).isNull();
        assertThat(INPUTS.fromNumbers(TensorType.STRINGS, read("{\"input\":[1]}"), -1)).isNull();
        assertThat(INPUTS.fromNumbers(TensorType.FLOATS, read("{\"input\":[1,2,3]}"), 3))
                .isEqualTo(new float[] {1, 2, 3});
    }

    private static NumericFieldBody read(String json) {
        return NumericFieldBody.read(MAPPER, json.getBytes(StandardCharsets.UTF_8), "input");
    }
}
