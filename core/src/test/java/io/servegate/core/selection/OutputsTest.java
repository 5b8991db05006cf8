package io.servegate.core.selection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutputsTest {

    @Test
    void classificationLossComparesTrimmedStringsAndNumbers() {
        assertThat(Outputs.loss(Task.CLASSIFICATION, "cat", "cat", 1)).isZero();
        assertThat(Outputs.loss(Task.CLASSIFICATION, " cat\n", "cat", 1)).isZero();
        assertThat(Outputs.loss(Task.CLASSIFICATION, "3", "3.0", 1)).isZero();
        assertThat(Outputs.loss(Task.CLASSIFICATION, "-0", "0.00", 1)).isZero();
        assertThat(Outputs.loss(Task.CLASSIFICATION, "3e0", "3", 1)).isZero();
        assertThat(Outputs.loss(Task.CLASSIFICATION, "Cat", "cat", 1)).isEqualTo(1.0);
        assertThat(Outputs.loss(Task.CLASSIFICATION, "3", "4", 1)).isEqualTo(1.0);
        assertThat(Outputs.loss(Task.CLASSIFICATION, "3", "3.0000001", 1)).isEqualTo(1.0);
        // not plain decimals, so compared as strings
        assertThat(Outputs.loss(Task.CLASSIFICATION, "3f", "3", 1)).isEqualTo(1.0);
        assertThat(Outputs.loss(Task.CLASSIFICATION, "NaN", "NaN", 1)).isZero();
        assertThat(Outputs.loss(Task.CLASSIFICATION, "1e400", "2e400", 1)).isEqualTo(1.0);
        assertThat(Outputs.loss(Task.CLASSIFICATION, null, "cat", 1)).isEqualTo(1.0);
    }

    @Test
    void regressionLossIsScaledAbsoluteErrorCappedAtOne() {
        assertThat(Outputs.loss(Task.REGRESSION, "2.5", "2", 1)).isEqualTo(0.5);
        assertThat(Outputs.loss(Task.REGRESSION, "2.5", "2", 2)).isEqualTo(0.25);
        assertThat(Outputs.loss(Task.REGRESSION, "10", "2", 1)).isEqualTo(1.0);
        assertThat(Outputs.loss(Task.REGRESSION, "n/a", "2", 1)).isEqualTo(1.0);
        assertThatThrownBy(() -> Outputs.loss(Task.REGRESSION, "1", "cat", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("label 'cat' is not a decimal number");
    }

    @Test
    void numbersAreStrictDecimals() {
        for (String s : List.of("1", "-1.5", "+.5", "5.", "1e3", " 7 ", "1E-3")) {
            assertThat(Outputs.number(s)).as(s).isNotNull();
        }
        for (String s : List.of("", " ", "NaN", "Infinity", "0x10", "3d", "1e", ".", "1,5", "1e999")) {
            assertThat(Outputs.number(s)).as(s).isNull();
        }
    }

    @Test
    void modelListsAreChecked() {
        assertThat(Outputs.checkModels(List.of("a", "b"))).containsExactly("a", "b");
        assertThatThrownBy(() -> Outputs.checkModels(List.of("a", "a")))
                .hasMessageContaining("duplicate model 'a'");
        assertThatThrownBy(() -> Outputs.checkModels(Arrays.asList("a", null)))
                .hasMessageContaining("must not be null or blank");
        assertThatThrownBy(() -> Outputs.checkModels(List.of(" ")))
                .hasMessageContaining("must not be null or blank");
    }
}
