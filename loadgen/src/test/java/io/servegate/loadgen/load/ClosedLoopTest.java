package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ClosedLoopTest {

    /** Answers at once; every third request fails. Counts what was asked of it. */
    private static final class CountingWorkload implements Workload {
        final AtomicLong sent = new AtomicLong();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();

        @Override
        public int inputsPerRequest() {
            return 5;
        }

        @Override
        public CompletableFuture<?> send() {
            long n = sent.incrementAndGet();
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            Thread.onSpinWait();
            inFlight.decrementAndGet();
            return n % 3 == 0 ? CompletableFuture.failedFuture(new IllegalStateException("request " + n))
                    : CompletableFuture.completedFuture("ok");
        }
    }

    @Test
    void countsSuccessesAndFailuresWithoutExceedingTheClientCount() throws Exception {
        CountingWorkload w = new CountingWorkload();
        LoadResult r = new ClosedLoop(3, Duration.ZERO, Duration.ofMillis(300)).run(w);

        assertThat(r.requests()).isPositive();
        assertThat(r.errors()).isPositive();
        // Every measured request was sent; at most one per client ends after the window.
        assertThat(r.requests() + r.errors()).isBetween(w.sent.get() - 3, w.sent.get());
        // Roughly a third failed.
        assertThat(r.errors()).isBetween((r.requests() + r.errors()) / 3 - 3, (r.requests() + r.errors()) / 3 + 3);
        // computed as ok * 5 / seconds: equal up to rounding
        assertThat(r.inputsPerSec()).isCloseTo(r.requestsPerSec() * 5, withinPercentage(1e-9));
        assertThat(r.requestsPerSec()).isEqualTo(r.requests() / r.durationS());
        assertThat(r.firstError()).contains("IllegalStateException: request ");
        assertThat(r.latency().count()).isEqualTo(r.requests());
        // Closed loop: never more requests outstanding than clients.
        assertThat(w.maxInFlight.get()).isBetween(1, 3);
    }

    @Test
    void warmUpRequestsAreNotMeasured() throws Exception {
        CountingWorkload w = new CountingWorkload();
        LoadResult r = new ClosedLoop(1, Duration.ofMillis(200), Duration.ofMillis(100)).run(w);
        assertThat(r.requests() + r.errors()).isLessThan(w.sent.get());
    }

    @Test
    void rejectsNonsenseSettings() {
        assertThatThrownBy(() -> new ClosedLoop(0, Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClosedLoop(1, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
