package io.servegate.core.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TokenBucketTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void admitsTheBurstThenTheRateInVirtualTime() {
        TokenBucket bucket = new TokenBucket(10, 5, 0);
        for (int i = 0; i < 5; i++) {
            assertThat(bucket.tryTake(0)).isZero();
        }
        assertThat(bucket.tryTake(0)).isEqualTo(SECOND / 10);
        // over 10 s at 100/s offered, 10/s admitted
        int admitted = 0;
        for (long t = 1; t <= 10 * SECOND; t += SECOND / 100) {
            if (bucket.tryTake(t) == 0) {
                admitted++;
            }
        }
        assertThat(admitted).isBetween(99, 101);
    }

    @Test
    void idleTimeFillsNoMoreThanTheBurst() {
        TokenBucket bucket = new TokenBucket(1000, 3, 0);
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            if (bucket.tryTake(3600 * SECOND) == 0) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(3);
    }

    @Test
    void aGivenBackTokenIsTakenAgainAndTheClockNeverRunsBackwards() {
        TokenBucket bucket = new TokenBucket(1, 1, 5 * SECOND);
        assertThat(bucket.tryTake(5 * SECOND)).isZero();
        bucket.giveBack();
        assertThat(bucket.tryTake(SECOND)).isZero(); // an earlier reading refills nothing
        assertThat(bucket.tryTake(SECOND)).isPositive();
    }

    @Test
    void refusesNonsense() {
        assertThatThrownBy(() -> new TokenBucket(0, 1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TokenBucket(Double.NaN, 1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TokenBucket(1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
