package io.servegate.core.autoscaling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class CapacityModelTest {

    /** Symphony's Table 4, ResNet50: α 1.053 ms, β 5.072 ms, SLO 25 ms. */
    private static final CapacityModel RESNET = new CapacityModel(
            b -> Math.round((5.072 + 1.053 * b) * 1e6), 25_000_000L, 256);

    @Test
    void staggeredExecutionMatchesSymphonysTable4() {
        assertThat(RESNET.staggeredBatch(8)).isEqualTo(16);
        assertThat(RESNET.capacity(8)).isCloseTo(5_839, within(1.0));
        // one replica: (1 + 1)·ℓ(b) ≤ 25 ms → b = 7
        assertThat(RESNET.staggeredBatch(1)).isEqualTo(7);
        assertThat(RESNET.capacity(1)).isCloseTo(7 / 12.443e-3, within(0.5));
    }

    @Test
    void replicasForARateAtAUtilisation() {
        double c4 = RESNET.capacity(4);
        assertThat(RESNET.replicasFor(c4 * 0.75, 0.75, 32)).isEqualTo(4);
        assertThat(RESNET.replicasFor(c4 * 0.75 + 1, 0.75, 32)).isEqualTo(5);
        assertThat(RESNET.replicasFor(1e9, 0.75, 32)).isEqualTo(33);
    }

    @Test
    void aModelSlowerThanItsSloHasNoCapacity() {
        CapacityModel slow = new CapacityModel(b -> 30_000_000L, 25_000_000L, 8);
        assertThat(slow.capacity(100)).isZero();
        assertThat(slow.replicasFor(1, 1, 10)).isEqualTo(11);
    }

    @Test
    void unbatchedLatencyIsMdc() {
        CapacityModel oneAtATime = new CapacityModel(b -> 2_000_000L * b, 1_000_000_000L, 1);
        // M/D/1, D = 2 ms, λ = 250/s (ρ = 0.5): D + ρD/(2(1−ρ)) = 3 ms
        assertThat(oneAtATime.unbatchedMeanLatencyNanos(250, 1)).isCloseTo(3e6, within(1.0));
        assertThat(oneAtATime.unbatchedMeanLatencyNanos(500, 1)).isInfinite();
    }
}
