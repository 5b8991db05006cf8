package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Counting only: no assertion depends on how fast this machine is. */
class OpenLoopTest {

    /** Answers at once; every fourth request fails. */
    private static final class InstantWorkload implements Workload {
        final AtomicLong sent = new AtomicLong();

        @Override
        public int inputsPerRequest() {
            return 1;
        }

        @Override
        public CompletableFuture<?> send() {
            long n = sent.incrementAndGet();
            return n % 4 == 0 ? CompletableFuture.failedFuture(new IllegalStateException("request " + n))
                    : CompletableFuture.completedFuture(n);
        }
    }

    @Test
    void everyScheduledRequestIsAnsweredOrCountedAsAnError() throws Exception {
        InstantWorkload w = new InstantWorkload();
        AtomicLong observed = new AtomicLong();
        OpenLoopResult r = new OpenLoop(1000, Duration.ofMillis(100), Duration.ofMillis(300), Duration.ofSeconds(5), 3)
                .run(w, (answer, nanos) -> {
                    assertThat(answer).isInstanceOf(Long.class);
                    assertThat(nanos).isNotNegative();
                    observed.incrementAndGet();
                });

        assertThat(r.scheduled()).isPositive();
        // warm-up requests were sent but not measured
        assertThat(w.sent.get()).isGreaterThan(r.scheduled());
        assertThat(r.requests() + r.errors()).isEqualTo(r.scheduled());
        assertThat(r.unanswered()).isZero();
        assertThat(r.errors()).isPositive();
        assertThat(observed.get()).isEqualTo(r.requests());
        assertThat(r.latency().count()).isEqualTo(r.requests());
        assertThat(r.firstError()).contains("IllegalStateException: request ");
        assertThat(r.scheduledRate()).isEqualTo(r.scheduled() / r.durationS());
        assertThat(r.requestsPerSec()).isEqualTo(r.requests() / r.durationS());
        assertThat(r.offeredRate()).isEqualTo(1000);
        assertThat(r.sendLagMaxMs()).isGreaterThanOrEqualTo(r.sendLagP50Ms()).isNotNegative();
    }

    @Test
    void answersStillMissingAfterTheDrainAreReportedAsUnanswered() throws Exception {
        Workload never = new Workload() {
            @Override
            public int inputsPerRequest() {
                return 1;
            }

            @Override
            public CompletableFuture<?> send() {
                return new CompletableFuture<>();
            }
        };
        OpenLoopResult r = new OpenLoop(200, Duration.ZERO, Duration.ofMillis(200), Duration.ZERO, 1).run(never);
        assertThat(r.scheduled()).isPositive();
        assertThat(r.unanswered()).isEqualTo(r.scheduled());
        assertThat(r.requests()).isZero();
        assertThat(r.latency()).isNull();
    }

    @Test
    void aSendThatThrowsIsAnError() throws Exception {
        Workload broken = new Workload() {
            @Override
            public int inputsPerRequest() {
                return 1;
            }

            @Override
            public CompletableFuture<?> send() {
                throw new IllegalArgumentException("bad request");
            }
        };
        OpenLoopResult r = new OpenLoop(200, Duration.ZERO, Duration.ofMillis(200), Duration.ofSeconds(1), 1)
                .run(broken);
        assertThat(r.errors()).isEqualTo(r.scheduled());
        assertThat(r.firstError()).contains("bad request");
    }

    @Test
    void rejectsNonsenseSettings() {
        assertThatThrownBy(() -> new OpenLoop(0, Duration.ZERO, Duration.ofSeconds(1), Duration.ZERO, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OpenLoop(10, Duration.ZERO, Duration.ZERO, Duration.ZERO, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OpenLoop(10, Duration.ofMillis(-1), Duration.ofSeconds(1), Duration.ZERO, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
