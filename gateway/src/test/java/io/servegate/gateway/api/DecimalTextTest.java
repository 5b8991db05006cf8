package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every conversion, fast path or not, is bit for bit what {@link Double#parseDouble} gives. */
class DecimalTextTest {

    @Test
    void edgeCasesMatchTheJdk() {
        for (String s : new String[] {"0", "-0", "0.0", "-0.0", "0.003921569", "1.0E-5", "1E5", "1e+5", "-2.5",
                "123456789012345", "1234567890123456", "12345678901234567890", "0.1", "0.30000000000000004",
                "1e22", "1e23", "9007199254740993", "1.7976931348623157E308", "4.9E-324", "1e-400", "1e400",
                "0.000000000000000000000000000001", "100000000000000000000000", "3.0e0", "2.000000000000000"}) {
            assertSame(s);
        }
    }

    @Test
    void randomFloatsDoublesAndShortDecimalsMatchTheJdk() {
        Random random = new Random(5);
        for (int i = 0; i < 200_000; i++) {
            assertSame(switch (i % 6) {
                case 0 -> Float.toString(random.nextFloat());
                case 1 -> Float.toString((float) (random.nextGaussian() * Math.pow(10, random.nextInt(60) - 30)));
                case 2 -> Double.toString(random.nextDouble());
                case 3 -> Double.toString(random.nextGaussian() * Math.pow(10, random.nextInt(80) - 40));
                case 4 -> (random.nextBoolean() ? "-" : "") + random.nextInt(100_000) + "." + random.nextInt(1_000_000_000);
                default -> random.nextInt(10_000) + "e" + (random.nextInt(60) - 30);
            });
        }
    }

    private static void assertSame(String s) {
        byte[] padded = ("[" + s + ",").getBytes(StandardCharsets.US_ASCII);
        double fast = DecimalText.toDouble(padded, 1, s.length());
        assertThat(Double.doubleToRawLongBits(fast)).as(s).isEqualTo(Double.doubleToRawLongBits(Double.parseDouble(s)));
    }
}
