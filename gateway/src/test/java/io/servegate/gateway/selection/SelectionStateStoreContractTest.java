package io.servegate.gateway.selection;

import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.StateCodecException;
import io.servegate.core.selection.Task;
import io.servegate.core.selection.Versioned;
import io.servegate.core.selection.WeightedPolicy;
import io.servegate.core.selection.WeightedState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Behaviour every {@link SelectionStateStore} must have, including no lost updates under
 * concurrent {@link SelectionStateStore#update}s.
 */
abstract class SelectionStateStoreContractTest {

    static final int WRITERS = 8;
    static final int UPDATES_PER_WRITER = 1_000;
    static final Duration BLOCK = Duration.ofSeconds(30);

    /** A fresh, empty store (or one with a fresh key space). */
    abstract SelectionStateStore store();

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void absentStateIsEmpty() {
        assertThat(store().get("app", "ctx").blockOptional(BLOCK)).isEmpty();
    }

    @Test
    void compareAndSetCreatesAndAdvancesVersions() {
        SelectionStateStore store = store();
        assertThat(store.compareAndSet("app", null, 5, bytes("x")).block(BLOCK)).as("absent, expected 5").isFalse();
        assertThat(store.compareAndSet("app", null, 0, bytes("one")).block(BLOCK)).isTrue();
        Versioned v1 = store.get("app", null).block(BLOCK);
        assertThat(v1.state()).isEqualTo(bytes("one"));
        assertThat(v1.version()).isPositive();
        assertThat(store.compareAndSet("app", null, 0, bytes("again")).block(BLOCK)).as("present, expected 0").isFalse();
        assertThat(store.compareAndSet("app", null, v1.version() + 1, bytes("x")).block(BLOCK)).as("wrong version").isFalse();
        assertThat(store.compareAndSet("app", null, v1.version() - 1, bytes("x")).block(BLOCK)).as("stale version").isFalse();
        assertThat(store.compareAndSet("app", null, v1.version(), bytes("two")).block(BLOCK)).isTrue();
        Versioned v2 = store.get("app", null).block(BLOCK);
        assertThat(v2.state()).isEqualTo(bytes("two"));
        assertThat(v2.version()).isEqualTo(v1.version() + 1);
        // the failed attempts changed nothing
        assertThat(store.compareAndSet("app", null, v1.version(), bytes("x")).block(BLOCK)).isFalse();
        assertThat(store.get("app", null).block(BLOCK)).isEqualTo(v2);
    }

    @Test
    void contextsAreSeparateAndCannotClash() {
        SelectionStateStore store = store();
        Map<List<String>, String> writes = new HashMap<>();
        String[][] keys = {{"app", null}, {"app", "u1"}, {"app", "@"}, {"app", "%40"}, {"app", "a:b"},
            {"app:a", "b"}, {"app2", null}, {"app", "ünï code"}, {"app", " "}};
        for (String[] k : keys) {
            String value = k[0] + "|" + k[1];
            assertThat(store.compareAndSet(k[0], k[1], 0, bytes(value)).block(BLOCK)).as(value).isTrue();
            writes.put(java.util.Arrays.asList(k), value);
        }
        for (String[] k : keys) {
            assertThat(store.get(k[0], k[1]).block(BLOCK).state()).isEqualTo(bytes(writes.get(java.util.Arrays.asList(k))));
        }
        // "" is the app-wide state, like null
        assertThat(store.get("app", "").block(BLOCK).state()).isEqualTo(bytes("app|null"));
        assertThatThrownBy(() -> store.get(" ", "c")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.compareAndSet("app", "c", -1, bytes("x")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void updateRetriesAfterLosingARace() {
        SelectionStateStore store = store();
        AtomicInteger reads = new AtomicInteger();
        // Another gateway writes right after our first read, so our compare-and-set loses.
        SelectionStateStore racing = new SelectionStateStore() {
            @Override
            public Mono<Versioned> get(String app, String context) {
                Mono<Versioned> read = store.get(app, context);
                if (reads.incrementAndGet() > 1) {
                    return read;
                }
                return read.map(Optional::of).defaultIfEmpty(Optional.empty())
                        .flatMap(v -> store.compareAndSet(app, context, 0, bytes("theirs")).thenReturn(v))
                        .flatMap(Mono::justOrEmpty);
            }

            @Override
            public Mono<Boolean> compareAndSet(String app, String context, long expectedVersion, byte[] state) {
                return store.compareAndSet(app, context, expectedVersion, state);
            }
        };
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        byte[] result = racing.update("app", "ctx", old -> {
            String before = old == null ? "" : new String(old, StandardCharsets.UTF_8);
            seen.add(before);
            return bytes(before + "+mine");
        }).block(BLOCK);
        assertThat(seen).containsExactly("", "theirs");
        assertThat(new String(result, StandardCharsets.UTF_8)).isEqualTo("theirs+mine");
        assertThat(store.get("app", "ctx").block(BLOCK).state()).isEqualTo(bytes("theirs+mine"));
    }

    @Test
    void updateReturningNullWritesNothing() {
        SelectionStateStore store = store();
        assertThat(store.update("app", "c", old -> null).blockOptional(BLOCK)).isEmpty();
        assertThat(store.get("app", "c").blockOptional(BLOCK)).isEmpty();
        store.update("app", "c", old -> bytes("v")).block(BLOCK);
        long version = store.get("app", "c").block(BLOCK).version();
        assertThat(store.update("app", "c", old -> null).block(BLOCK)).isEqualTo(bytes("v"));
        assertThat(store.get("app", "c").block(BLOCK).version()).isEqualTo(version);
    }

    @Test
    void updateFailsWithoutRetryingWhenTheFunctionThrows() {
        SelectionStateStore store = store();
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> store.update("app", "c", old -> {
            calls.incrementAndGet();
            throw new StateCodecException("bad state");
        }).block(BLOCK)).isInstanceOf(StateCodecException.class);
        assertThat(calls).hasValue(1);
    }

    /** Commutative: state = one counter per writer, so the result is order-independent. */
    @Test
    void concurrentCounterUpdatesAreNeverLost() throws Exception {
        runCounters(Collections.nCopies(WRITERS, store()));
    }

    /** Real {@link Exp4Policy} states: every observation is applied exactly once. */
    @Test
    void concurrentExp4ObservationsAreNeverLost() throws Exception {
        runExp4(Collections.nCopies(WRITERS, store()));
    }

    /**
     * {@link SelectionStateStore#observe} gives, bit for bit, the state the policy's own Java
     * gives for the same observations: Exp3 with recorded probabilities (a large eta drives
     * weights to the floor), Exp4, regression, and a change of the linked models midway.
     */
    @Test
    void observeGivesTheStateThePolicysJavaUpdateGives() {
        SelectionStateStore store = store();
        List<WeightedPolicy> policies = List.of(new Exp3Policy(), new Exp3Policy(3.0, 0.05, Task.CLASSIFICATION, 1),
                new Exp4Policy(), new Exp4Policy(0.7, Task.REGRESSION, 0.1, 2.5));
        SplittableRandom random = new SplittableRandom(17);
        List<String> models = List.of("a", "b", "c", "d");
        List<String> relinked = List.of("d", "b", "e");
        for (int k = 0; k < policies.size(); k++) {
            WeightedPolicy policy = policies.get(k);
            boolean regression = k == 3;
            String app = "app" + k;
            WeightedState expected = null;
            boolean floor = false;
            for (int i = 0; i < 300; i++) {
                List<String> linked = i < 200 ? models : relinked;
                expected = policy.link(expected == null ? policy.init(linked) : expected, linked);
                Map<String, String> outputs = new HashMap<>();
                Map<String, Double> probabilities = new HashMap<>();
                List<String> selected = policy instanceof Exp3Policy
                        ? policy.select(expected, null, random) : linked;
                for (String m : selected) {
                    if (random.nextInt(10) > 0) {
                        outputs.put(m, regression ? Double.toString(random.nextDouble() * 4) : "" + random.nextInt(3));
                        // sometimes the probability under an older state, sometimes the current one
                        probabilities.put(m, random.nextBoolean() ? policy.probability(expected, m)
                                : random.nextDouble(0.01, 1.0));
                    }
                }
                String label = regression ? "1.5" : "" + random.nextInt(3);
                String context = i % 2 == 0 ? null : "user";
                byte[] written = store.observe(app, context, policy, linked,
                        policy.step(null, label, outputs, probabilities)).block(BLOCK);
                if (context == null) {
                    expected = policy.observe(expected, null, label, outputs, probabilities);
                    assertThat(policy.codec().decode(written)).as("%s, observation %d", policy, i).isEqualTo(expected);
                    assertThat(store.get(app, null).block(BLOCK).state()).isEqualTo(written);
                    floor |= Arrays.stream(expected.logWeights()).anyMatch(w -> w == WeightedState.MIN_LOG_WEIGHT);
                }
            }
            assertThat(expected.observations()).isEqualTo(150);
            assertThat(policy.codec().decode(store.get(app, "user").block(BLOCK).state()).observations())
                    .isEqualTo(150);
            assertThat(expected.logWeights()).as("%s learned something", policy).isNotEqualTo(new double[3]);
            assertThat(floor).as("%s drove a weight to the floor", policy).isEqualTo(k == 1);
        }
    }

    static void runCounters(List<SelectionStateStore> stores) throws Exception {
        int writers = stores.size();
        String app = "counting";
        long attempts = runWriters(stores, app, (w, i) -> old -> {
            ByteBuffer b = ByteBuffer.allocate(8 * writers);
            if (old != null) {
                b.put(old).flip();
            }
            long[] counts = new long[writers];
            for (int j = 0; j < writers && old != null; j++) {
                counts[j] = b.getLong();
            }
            counts[w]++;
            ByteBuffer out = ByteBuffer.allocate(8 * writers);
            for (long c : counts) {
                out.putLong(c);
            }
            return out.array();
        });
        ByteBuffer b = ByteBuffer.wrap(stores.get(0).get(app, "ctx").block(BLOCK).state());
        long total = 0;
        for (int w = 0; w < writers; w++) {
            long c = b.getLong();
            assertThat(c).as("writer %d", w).isEqualTo(UPDATES_PER_WRITER);
            total += c;
        }
        assertThat(total).isEqualTo((long) writers * UPDATES_PER_WRITER);
        assertThat(attempts).isGreaterThanOrEqualTo(total);
        System.out.printf("%s: %d counter updates took %d attempts%n", stores.get(0), total, attempts);
    }

    static void runExp4(List<SelectionStateStore> stores) throws Exception {
        int writers = stores.size();
        // small eta: no weight reaches the floor, so the result is order-independent up to rounding
        Exp4Policy policy = new Exp4Policy(0.001, Task.CLASSIFICATION, 0, 1);
        List<String> models = List.of("a", "b", "c");
        String app = "exp4";
        long attempts = runWriters(stores, app, (w, i) -> old -> {
            WeightedState s = old == null ? policy.init(models) : policy.codec().decode(old);
            return policy.codec().encode(policy.observe(s, null, "x", observation(w, i)));
        });
        WeightedState shared = policy.codec().decode(stores.get(0).get(app, "ctx").block(BLOCK).state());
        WeightedState sequential = policy.init(models);
        for (int w = 0; w < writers; w++) {
            for (int i = 0; i < UPDATES_PER_WRITER; i++) {
                sequential = policy.observe(sequential, null, "x", observation(w, i));
            }
        }
        assertThat(shared.observations()).isEqualTo((long) writers * UPDATES_PER_WRITER);
        double[] expected = sequential.logWeights();
        double[] actual = shared.logWeights();
        for (int m = 0; m < expected.length; m++) {
            assertThat(actual[m]).as(models.get(m)).isCloseTo(expected[m], within(1e-9));
        }
        // and the updates really moved the weights (b and c were wrong often)
        assertThat(expected[1]).isLessThan(-1.0);
        System.out.printf("%s: %d Exp4 observations took %d attempts%n", stores.get(0), shared.observations(), attempts);
    }

    private static Map<String, String> observation(int writer, int i) {
        return Map.of("a", "x", "b", (writer + i) % 2 == 0 ? "y" : "x", "c", i % 3 == 0 ? "z" : "x");
    }

    interface UpdateFactory {
        Function<byte[], byte[]> update(int writer, int index);
    }

    /**
     * Starts one thread per store; each applies {@link #UPDATES_PER_WRITER} updates to the same
     * key with {@link SelectionStateStore#update}, all released at once.
     *
     * @return how many times the update functions ran (successful and lost attempts)
     */
    static long runWriters(List<SelectionStateStore> stores, String app, UpdateFactory updates) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        AtomicLong attempts = new AtomicLong();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < stores.size(); w++) {
            int writer = w;
            SelectionStateStore store = stores.get(w);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < UPDATES_PER_WRITER; i++) {
                        Function<byte[], byte[]> fn = updates.update(writer, i);
                        store.update(app, "ctx", old -> {
                            attempts.incrementAndGet();
                            return fn.apply(old);
                        }).block(BLOCK);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "selection-writer-" + w);
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(120_000);
            assertThat(t.isAlive()).as(t.getName() + " finished").isFalse();
        }
        assertThat(errors).isEmpty();
        return attempts.get();
    }
}
