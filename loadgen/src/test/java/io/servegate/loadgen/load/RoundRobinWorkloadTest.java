package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RoundRobinWorkloadTest {

    /** Answers at once with a prediction, or with a default when {@code defaults}; counts its requests. */
    private static final class Target implements Workload {
        final AtomicInteger sent = new AtomicInteger();
        final boolean defaults;

        Target(boolean defaults) {
            this.defaults = defaults;
        }

        @Override
        public int inputsPerRequest() {
            return 1;
        }

        @Override
        public CompletableFuture<?> send() {
            sent.incrementAndGet();
            return CompletableFuture.completedFuture(new GatewayAnswer("1", defaults, defaults ? "late" : null));
        }
    }

    @Test
    void spreadsRequestsInTurnAndSkipsATargetMarkedDown() {
        Target a = new Target(false);
        Target b = new Target(false);
        Target c = new Target(true);
        RoundRobinWorkload w = new RoundRobinWorkload(List.of(a, b, c));
        for (int i = 0; i < 30; i++) {
            w.send().join();
        }
        assertThat(List.of(a.sent.get(), b.sent.get(), c.sent.get())).containsExactly(10, 10, 10);
        w.markDown(1);
        for (int i = 0; i < 20; i++) {
            w.send().join();
        }
        assertThat(b.sent.get()).isEqualTo(10);
        assertThat(a.sent.get() + c.sent.get()).isEqualTo(40);
        assertThat(a.sent.get()).isEqualTo(20);
        // predictions are timed per target; defaults are not predictions
        assertThat(w.predictedLatency(0).count()).isEqualTo(20);
        assertThat(w.predictedLatency(2)).isNull();
    }

    @Test
    void refusesToSendWhenEveryTargetIsDown() {
        RoundRobinWorkload w = new RoundRobinWorkload(List.of(new Target(false)));
        w.markDown(0);
        assertThatThrownBy(w::send).isInstanceOf(IllegalStateException.class).hasMessageContaining("every target");
    }

    @Test
    void aTargetAddedLaterTakesItsTurnFromThen() {
        Target a = new Target(false);
        Target b = new Target(false);
        RoundRobinWorkload w = new RoundRobinWorkload(List.of(a, b));
        for (int i = 0; i < 10; i++) {
            w.send().join();
        }
        Target joiner = new Target(false);
        assertThat(w.add(joiner)).isEqualTo(2);
        for (int i = 0; i < 30; i++) {
            w.send().join();
        }
        assertThat(joiner.sent.get()).isEqualTo(10);
        assertThat(a.sent.get() + b.sent.get()).isEqualTo(30);
        assertThat(w.predictedLatency(2).count()).isEqualTo(10);
        w.markDown(2);
        w.send().join();
        assertThat(joiner.sent.get()).isEqualTo(10);
    }
}
