package io.servegate.loadgen.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Hand-computed optima: one replica β 5 α 0.5 SLO 20 ms, and Symphony's Table 4 ResNet50 row. */
class ServingOptimumTest {

    @Test
    void oneReplicaWithoutCoordinationFitsTwoBatchesInTheSlo() {
        // floor((20/2 − 5) / 0.5) = 10; 10 / (5 + 5) ms = 1,000/s
        ServingOptimum.Point p = ServingOptimum.uncoordinated(1, 5, 0.5, 20);
        assertThat(p.batchSize()).isEqualTo(10);
        assertThat(p.perSec()).isCloseTo(1000, within(1e-9));
        // one replica staggers with itself only: the same bound
        assertThat(ServingOptimum.staggered(1, 5, 0.5, 20)).isEqualTo(p);
    }

    @Test
    void symphonyTable4ResNet50Row() {
        // floor((12.5 − 5.072) / 1.053) = floor(7.054) = 7; 8·7 / 12.443 ms = 4,500.5/s
        ServingOptimum.Point none = ServingOptimum.uncoordinated(8, 5.072, 1.053, 25);
        assertThat(none.batchSize()).isEqualTo(7);
        assertThat(none.perSec()).isCloseTo(4500.5, within(0.1));
        // floor((25/1.125 − 5.072) / 1.053) = floor(16.29) = 16; 8·16 / 21.92 ms = 5,839.4/s
        ServingOptimum.Point staggered = ServingOptimum.staggered(8, 5.072, 1.053, 25);
        assertThat(staggered.batchSize()).isEqualTo(16);
        assertThat(staggered.perSec()).isCloseTo(5839.4, within(0.1));
    }

    @Test
    void underOverloadTheFreshestQueriesMakeLargerBatches() {
        // 2/ms · (15 − 0.5·b) ≥ b ⇔ b ≤ 15 (equality: no rounding may lose it); 15 / 12.5 ms = 1,200/s
        ServingOptimum.Point twice = ServingOptimum.atRate(1, 5, 0.5, 20, 2000);
        assertThat(twice.batchSize()).isEqualTo(15);
        assertThat(twice.perSec()).isCloseTo(1200, within(1e-9));
        // 4/ms · (15 − 0.5·b) ≥ b ⇔ b ≤ 20; 20 / 15 ms = 1,333.3/s
        ServingOptimum.Point fourTimes = ServingOptimum.atRate(1, 5, 0.5, 20, 4000);
        assertThat(fourTimes.batchSize()).isEqualTo(20);
        assertThat(fourTimes.perSec()).isCloseTo(4000 / 3.0, within(1e-9));
        // 1/ms: b ≤ 10, exactly the uncoordinated capacity
        assertThat(ServingOptimum.atRate(1, 5, 0.5, 20, 1000).perSec()).isCloseTo(1000, within(1e-9));
    }

    @Test
    void belowCapacityEveryQueryCanBeServed() {
        // 0.8/ms: b ≤ 12/1.4, b = 8, 888.9/s of capacity, so all 800/s
        ServingOptimum.Point p = ServingOptimum.atRate(1, 5, 0.5, 20, 800);
        assertThat(p.batchSize()).isEqualTo(8);
        assertThat(p.perSec()).isEqualTo(800);
        // so few arrivals that no second query comes in time: batches of one still serve them all
        assertThat(ServingOptimum.atRate(1, 5, 0.5, 20, 10)).isEqualTo(new ServingOptimum.Point(1, 10));
        // at Table 4's staggered optimum the rate bound and the staggered bound coincide: b = 16
        ServingOptimum.Point table4 = ServingOptimum.atRate(8, 5.072, 1.053, 25, 5839);
        assertThat(table4.batchSize()).isEqualTo(16);
        assertThat(table4.perSec()).isEqualTo(5839);
    }

    @Test
    void anSloBelowOneInputsServiceTimeHasNoGoodput() {
        assertThat(ServingOptimum.atRate(1, 5, 0.5, 5.4, 1000)).isEqualTo(new ServingOptimum.Point(0, 0));
        assertThat(ServingOptimum.uncoordinated(1, 5, 0.5, 10)).isEqualTo(new ServingOptimum.Point(0, 0));
        assertThatThrownBy(() -> ServingOptimum.staggered(0, 5, 0.5, 20)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ServingOptimum.atRate(1, 5, 0.5, 20, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
