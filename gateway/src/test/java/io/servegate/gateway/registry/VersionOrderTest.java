package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class VersionOrderTest {

    @Test
    void digitRunsCompareAsNumbers() {
        assertThat(VersionOrder.compare("9", "10")).isNegative();
        assertThat(VersionOrder.compare("v1.10", "v1.9")).isPositive();
        assertThat(VersionOrder.compare("1.0.0", "1.0.0")).isZero();
        assertThat(VersionOrder.compare("123456789012345678901234567890", "99")).isPositive();
    }

    @Test
    void sortsAMixedListLikeAPerson() {
        List<String> expected = List.of("0", "01", "1", "2", "9", "10", "10a", "10b", "11", "v1", "v1.2", "v1.2-rc1",
                "v1.10", "v2", "x");
        List<String> shuffled = new ArrayList<>(expected);
        Collections.shuffle(shuffled, new Random(7));
        shuffled.sort(VersionOrder.COMPARATOR);
        assertThat(shuffled).containsExactlyElementsOf(expected);
    }

    @Test
    void isAntisymmetricAndConsistentWithEquals() {
        String[] vs = {"1", "01", "001", "a", "a1", "1a", "a01", "a1b", "", "-", "1-", "1.0", "1.00"};
        for (String a : vs) {
            for (String b : vs) {
                assertThat(Integer.signum(VersionOrder.compare(a, b)))
                        .as("%s vs %s", a, b).isEqualTo(-Integer.signum(VersionOrder.compare(b, a)));
                assertThat(VersionOrder.compare(a, b) == 0).isEqualTo(a.equals(b));
            }
        }
    }
}
