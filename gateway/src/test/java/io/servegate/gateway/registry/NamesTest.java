package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class NamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "0", "app", "my-app", "model.v2", "snake_case", "a1-b2.c3_d4", "1.0.0", "v10"})
    void acceptsClipperNames(String name) {
        assertThat(Names.requireValid("app", name)).isEqualTo(name);
        assertThat(Names.isValid(name)).isTrue();
    }

    @Test
    void acceptsExactly63Characters() {
        String max = "a".repeat(63);
        assertThat(Names.requireValid("model", max)).isEqualTo(max);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "a,b     | illegal character ','",
        "a:b     | illegal character ':'",
        "a/b     | illegal character '/'",
        "a b     | whitespace U+0020",
        "a*b     | illegal character '*'",
        "a..b    | contains \"..\"",
        "-ab     | starts with '-'",
        ".ab     | starts with '.'",
        "ab-     | ends with '-'",
        "ab_     | ends with '_'",
        "MyApp   | upper-case 'M'",
        "appX    | lower case",
        "café    | illegal character 'é'",
    })
    void rejectsWithAMessageNamingTheProblem(String name, String problem) {
        assertThatThrownBy(() -> Names.requireValid("app", name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid app name")
                .hasMessageContaining(problem.strip());
        assertThat(Names.isValid(name)).isFalse();
    }

    @Test
    void rejectsControlCharactersWithoutEchoingThem() {
        for (char c : new char[] {'\u0000', '\n', '\t', '\u001b', '\u007f'}) {
            String name = "ab" + c + "cd";
            assertThatThrownBy(() -> Names.requireValid("model", name))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(String.format("U+%04X", (int) c))
                    .hasMessageContaining("control character")
                    .hasMessageContaining("position 2")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(String.valueOf(c)));
        }
    }

    @Test
    void rejectsEmptyNullAndTooLong() {
        assertThatThrownBy(() -> Names.requireValid("model", ""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("model").hasMessageContaining("empty");
        assertThatThrownBy(() -> Names.requireValid("model", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("null");
        String tooLong = "a".repeat(64);
        assertThatThrownBy(() -> Names.requireValid("version", tooLong))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid version name")
                .hasMessageContaining("64 characters long")
                .hasMessageContaining("at most 63");
    }
}
