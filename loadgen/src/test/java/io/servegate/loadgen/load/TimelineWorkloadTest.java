package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TimelineWorkloadTest {

    /** Answers each request with whatever {@code next} holds at the time. */
    private static final class Scripted implements Workload {
        final AtomicReference<CompletableFuture<?>> next = new AtomicReference<>();

        @Override
        public int inputsPerRequest() {
            return 1;
        }

        @Override
        public CompletableFuture<?> send() {
            return next.get();
        }
    }

    @Test
    void countsEachRequestInTheSecondItWasSentByWhatBecameOfIt() {
        Scripted inner = new Scripted();
        long start = System.nanoTime();
        TimelineWorkload w = new TimelineWorkload(inner, start, Long.MAX_VALUE, 60);
        inner.next.set(CompletableFuture.completedFuture(new GatewayAnswer("1", false, null)));
        w.send();
        inner.next.set(CompletableFuture.completedFuture(new GatewayAnswer("-1", true, "late")));
        w.send();
        w.send();
        inner.next.set(CompletableFuture.failedFuture(new IllegalStateException("HTTP 503")));
        w.send();
        CompletableFuture<GatewayAnswer> pending = new CompletableFuture<>();
        inner.next.set(pending);
        w.send();

        TimelineWorkload.Second first = w.seconds().get(0);
        assertThat(first.sent()).isEqualTo(5);
        assertThat(first.inSlo()).isEqualTo(1);
        assertThat(first.defaults()).isEqualTo(2);
        assertThat(first.failed()).isEqualTo(1);
        assertThat(w.seconds()).hasSize(60);
        assertThat(w.seconds().get(1).sent()).isZero();

        // the mark: only predictions for requests sent after it count as resumed
        assertThat(w.firstPredictionAfterMark()).isEmpty();
        w.mark(System.nanoTime());
        pending.complete(new GatewayAnswer("2", false, null));
        assertThat(w.firstPredictionAfterMark()).as("sent before the mark").isEmpty();
        inner.next.set(CompletableFuture.completedFuture(new GatewayAnswer("-1", true, "unreachable")));
        w.send();
        assertThat(w.firstPredictionAfterMark()).as("a default is no prediction").isEmpty();
        inner.next.set(CompletableFuture.completedFuture(new GatewayAnswer("3", false, null)));
        w.send();
        assertThat(w.firstPredictionAfterMark()).isPresent();
    }

    @Test
    void aPredictionSlowerThanTheSloIsLate() throws Exception {
        Scripted inner = new Scripted();
        TimelineWorkload w = new TimelineWorkload(inner, System.nanoTime(), 1_000_000, 10);
        CompletableFuture<GatewayAnswer> slow = new CompletableFuture<>();
        inner.next.set(slow);
        w.send();
        Thread.sleep(5);
        slow.complete(new GatewayAnswer("1", false, null));
        assertThat(w.seconds().get(0).late()).isEqualTo(1);
        assertThat(w.seconds().get(0).inSlo()).isZero();
    }

    @Test
    void aWindowCountsOnlyTheRequestsSentInItsSpanEvenPastTheTimelinesSeconds() {
        Scripted inner = new Scripted();
        long start = System.nanoTime();
        TimelineWorkload w = new TimelineWorkload(inner, start - 5_000_000_000L, Long.MAX_VALUE, 2);
        inner.next.set(CompletableFuture.completedFuture(new GatewayAnswer("1", false, null)));
        w.send(); // before any window
        w.openWindow("now", System.nanoTime(), 60_000_000_000L);
        w.openWindow("later", System.nanoTime() + 30_000_000_000L, 10_000_000_000L);
        w.send();
        inner.next.set(CompletableFuture.completedFuture(new GatewayAnswer("-1", true, "unreachable")));
        w.send();
        CompletableFuture<GatewayAnswer> pending = new CompletableFuture<>();
        inner.next.set(pending);
        w.send();

        TimelineWorkload.Window now = w.windows().get(0);
        assertThat(now.name()).isEqualTo("now");
        assertThat(now.fromS()).isGreaterThanOrEqualTo(5.0);
        assertThat(now.sent()).isEqualTo(3);
        assertThat(now.inSlo()).isEqualTo(1);
        assertThat(now.defaults()).isEqualTo(1);
        assertThat(now.answered()).as("one still in flight").isEqualTo(2);
        pending.completeExceptionally(new IllegalStateException("HTTP 503"));
        now = w.windows().get(0);
        assertThat(now.failed()).isEqualTo(1);
        assertThat(now.answered()).isEqualTo(3);
        assertThat(now.lostShare()).isEqualTo(2.0 / 3);
        assertThat(w.windows().get(1).sent()).as("not open yet").isZero();
        assertThat(w.windows().get(1).lostShare()).isZero();
        assertThat(w.seconds()).as("past the timeline's seconds").allMatch(s -> s.sent() == 0);
    }
}
