package io.servegate.gateway.selection;

import io.servegate.core.selection.Versioned;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class InMemorySelectionStateStoreTest extends SelectionStateStoreContractTest {

    @Override
    SelectionStateStore store() {
        return new InMemorySelectionStateStore();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void expiresAfterTheLastWrite() {
        AtomicLong now = new AtomicLong();
        InMemorySelectionStateStore store = new InMemorySelectionStateStore(
                new StateBounds(100, Duration.ofMinutes(1)), now::get);
        for (String context : new String[] {"c", null}) {
            store.update("app", context, old -> bytes("v1")).block(BLOCK);
            now.addAndGet(TimeUnit.SECONDS.toNanos(45));
            store.update("app", context, old -> bytes("v2")).block(BLOCK);
            now.addAndGet(TimeUnit.SECONDS.toNanos(45));
            // 90 s after the first write, 45 s after the last
            assertThat(store.get("app", context).block(BLOCK).state()).isEqualTo(bytes("v2"));
            now.addAndGet(TimeUnit.SECONDS.toNanos(16));
            assertThat(store.get("app", context).blockOptional(BLOCK)).as("context %s", context).isEmpty();
            // an expired state is created afresh
            assertThat(store.compareAndSet("app", context, 0, bytes("v3")).block(BLOCK)).isTrue();
        }
    }

    /**
     * A flood of 5,000 distinct contexts on one app with a bound of 1,000: the app keeps at most
     * 1,000 (the evictions are counted), its app-wide state and another app's states stay, and
     * what is left expires.
     */
    @Test
    void aFloodOfContextsStaysWithinThePerAppBoundAndExpires() {
        AtomicLong now = new AtomicLong();
        InMemorySelectionStateStore store = new InMemorySelectionStateStore(
                new StateBounds(1_000, Duration.ofDays(7)), now::get);
        assertThat(store.compareAndSet("app", null, 0, bytes("shared")).block(BLOCK)).isTrue();
        assertThat(store.compareAndSet("other", "user-1", 0, bytes("kept")).block(BLOCK)).isTrue();
        for (int i = 0; i < 5_000; i++) {
            assertThat(store.compareAndSet("app", "flood-" + i, 0, bytes("x")).block(BLOCK)).isTrue();
            assertThat(store.size("app")).isLessThanOrEqualTo(1_000);
        }
        assertThat(store.size("app")).isEqualTo(1_000);
        assertThat(store.evictions()).isEqualTo(4_000);
        assertThat(store.get("app", null).block(BLOCK).state()).isEqualTo(bytes("shared"));
        assertThat(store.get("other", "user-1").block(BLOCK).state()).isEqualTo(bytes("kept"));
        now.addAndGet(Duration.ofDays(7).toNanos() + 1);
        assertThat(store.size()).isZero();
        assertThatThrownBy(() -> new StateBounds(0, null)).hasMessageContaining("maxStatesPerApp");
        assertThatThrownBy(() -> new StateBounds(1, Duration.ZERO)).hasMessageContaining("ttl");
    }

    @Test
    void updateGivesUpAfterTheAttemptBound() {
        AtomicInteger casCalls = new AtomicInteger();
        SelectionStateStore alwaysContended = new SelectionStateStore() {
            @Override
            public Mono<Versioned> get(String app, String context) {
                return Mono.just(new Versioned(bytes("s"), 1));
            }

            @Override
            public Mono<Boolean> compareAndSet(String app, String context, long expectedVersion, byte[] state) {
                casCalls.incrementAndGet();
                return Mono.just(false);
            }
        };
        assertThatThrownBy(() -> alwaysContended.update("app", "user-7", old -> bytes("t")).block(BLOCK))
                .isInstanceOf(SelectionStateConflictException.class)
                .hasMessageContaining("app 'app' context 'user-7' is still contended after 100 attempts");
        assertThat(casCalls).hasValue(100);
        casCalls.set(0);
        assertThatThrownBy(() -> OptimisticUpdate.run(alwaysContended, "app", null, old -> bytes("t"), 3,
                Duration.ZERO, Duration.ZERO).block(BLOCK))
                .hasMessageContaining("context (app-wide) is still contended after 3 attempts");
        assertThat(casCalls).hasValue(3);
    }
}
