package io.servegate.gateway.selection;

import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.StateCodecException;
import io.servegate.core.selection.WeightedState;
import io.servegate.core.selection.WeightedStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.servegate.gateway.testsupport.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store contract against a real {@code redis-server}, plus Redis-specific behaviour. */
class RedisSelectionStateStoreTest extends SelectionStateStoreContractTest {

    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static RedisServer server;
    private static RedisClient client;
    private static RedisClient otherClient;
    private static StatefulRedisConnection<String, String> rawConnection;
    private static RedisCommands<String, String> raw;

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
        client = RedisClient.create(server.uri());
        // a second client stands for a second gateway instance
        otherClient = RedisClient.create(server.uri());
        rawConnection = client.connect();
        raw = rawConnection.sync();
    }

    @AfterAll
    static void stopRedis() {
        if (rawConnection != null) {
            rawConnection.close();
        }
        for (RedisClient c : new RedisClient[] {client, otherClient}) {
            if (c != null) {
                c.shutdown();
            }
        }
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeStores() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        toClose.clear();
    }

    private static String freshPrefix() {
        return "t" + PREFIXES.incrementAndGet();
    }

    private RedisSelectionStateStore open(RedisClient c, String prefix, Duration ttl) {
        return openBounded(c, prefix, new StateBounds(100_000, ttl));
    }

    private RedisSelectionStateStore openBounded(RedisClient c, String prefix, StateBounds bounds) {
        RedisSelectionStateStore store = new RedisSelectionStateStore(c, prefix, bounds);
        toClose.add(store);
        return store;
    }

    @Override
    SelectionStateStore store() {
        return open(client, freshPrefix(), null);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void twoGatewayInstancesSharingOneRedisNeverLoseUpdates() throws Exception {
        String prefix = freshPrefix();
        RedisSelectionStateStore first = open(client, prefix, null);
        RedisSelectionStateStore second = open(otherClient, prefix, null);
        List<SelectionStateStore> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            writers.add(w < WRITERS / 2 ? first : second);
        }
        runCounters(writers);
        runExp4(writers);
    }

    @Test
    void keysFollowTheDocumentedLayout() {
        String prefix = freshPrefix();
        RedisSelectionStateStore store = open(client, prefix, null);
        assertThat(store.key("app", null)).isEqualTo(prefix + ":sel:app:@");
        assertThat(store.key("app", "")).isEqualTo(prefix + ":sel:app:@");
        assertThat(store.key("app", "user:42")).isEqualTo(prefix + ":sel:app:user%3A42");
        assertThat(store.key("app", "@")).isEqualTo(prefix + ":sel:app:%40");
        assertThat(store.compareAndSet("app", "u", 0, bytes("state")).block(BLOCK)).isTrue();
        Map<String, String> hash = raw.hgetall(prefix + ":sel:app:u");
        assertThat(hash).containsOnlyKeys("ver", "state").containsEntry("state", "state");
        assertThat(Long.parseLong(hash.get("ver"))).isEqualTo(store.get("app", "u").block(BLOCK).version());
    }

    @Test
    void ttlIsSetOnEveryWriteWhenConfigured() {
        String prefix = freshPrefix();
        RedisSelectionStateStore expiring = open(client, prefix, Duration.ofSeconds(60));
        String key = expiring.key("app", "c");
        assertThat(expiring.compareAndSet("app", "c", 0, bytes("a")).block(BLOCK)).isTrue();
        assertThat(raw.pttl(key)).isBetween(1L, 60_000L);
        raw.persist(key);
        long version = expiring.get("app", "c").block(BLOCK).version();
        assertThat(expiring.compareAndSet("app", "c", version, bytes("b")).block(BLOCK)).isTrue();
        assertThat(raw.pttl(key)).as("reset by the update").isBetween(1L, 60_000L);
        // a failed compare-and-set does not touch the TTL
        raw.persist(key);
        assertThat(expiring.compareAndSet("app", "c", version, bytes("c")).block(BLOCK)).isFalse();
        assertThat(raw.pttl(key)).isEqualTo(-1L);

        // without a TTL, keys do not expire (and lose a TTL they had)
        RedisSelectionStateStore forever = open(client, prefix, null);
        raw.pexpire(key, 60_000);
        assertThat(forever.compareAndSet("app", "c", version + 1, bytes("d")).block(BLOCK)).isTrue();
        assertThat(raw.pttl(key)).isEqualTo(-1L);

        // and an expired key is gone
        RedisSelectionStateStore shortLived = open(client, prefix, Duration.ofMillis(1));
        assertThat(shortLived.compareAndSet("app", "gone", 0, bytes("x")).block(BLOCK)).isTrue();
        assertThatThrownBy(() -> new StateBounds(1, Duration.ofNanos(10)))
                .hasMessageContaining("ttl must be >= 1 ms");
    }

    /**
     * A flood of 5,000 distinct contexts on one app with a bound of 1,000, from two gateways
     * sharing Redis and through both scripts (compare-and-set and a policy's observe): Redis
     * holds at most 1,000 of the app's per-context states at every point, each expiring, in a
     * sorted set of as many members; the app-wide state and another app's states stay.
     */
    @Test
    void aFloodOfContextsStaysWithinThePerAppBoundAcrossGatewaysAndExpires() {
        String prefix = freshPrefix();
        StateBounds bounds = new StateBounds(1_000, Duration.ofHours(1));
        RedisSelectionStateStore first = openBounded(client, prefix, bounds);
        RedisSelectionStateStore second = openBounded(otherClient, prefix, bounds);
        Exp4Policy policy = new Exp4Policy();
        List<String> models = List.of("a", "b");
        WeightedStep step = policy.step(null, "x", Map.of("a", "x", "b", "y"), Map.of());
        assertThat(first.compareAndSet("app", null, 0, bytes("shared")).block(BLOCK)).isTrue();
        assertThat(first.compareAndSet("other", "user-1", 0, bytes("kept")).block(BLOCK)).isTrue();
        for (int chunk = 0; chunk < 5; chunk++) {
            reactor.core.publisher.Flux.range(chunk * 1_000, 1_000)
                    .flatMap(i -> i % 2 == 0
                            ? first.compareAndSet("app", "flood-" + i, 0, bytes("x"))
                            : second.observe("app", "flood-" + i, policy, models, step), 16)
                    .blockLast(BLOCK);
            assertThat(raw.keys(prefix + ":sel:app:flood-*")).hasSizeLessThanOrEqualTo(1_000);
        }
        List<String> keys = raw.keys(prefix + ":sel:app:flood-*");
        assertThat(keys).hasSize(1_000);
        assertThat(raw.zcard(prefix + ":sel-lru:app")).isEqualTo(1_000);
        assertThat(first.evictions() + second.evictions()).isEqualTo(4_000);
        // the most recent contexts are the ones kept (a few may share a millisecond with older ones)
        assertThat(keys).contains(prefix + ":sel:app:flood-4999");
        for (String key : keys) {
            assertThat(raw.pttl(key)).as(key).isBetween(1L, 3_600_000L);
        }
        assertThat(raw.pttl(prefix + ":sel-lru:app")).isBetween(1L, 3_600_000L);
        assertThat(first.get("app", null).block(BLOCK).state()).isEqualTo(bytes("shared"));
        assertThat(first.get("other", "user-1").block(BLOCK).state()).isEqualTo(bytes("kept"));
        assertThat(raw.zcard(prefix + ":sel-lru:other")).isEqualTo(1);
    }

    /** Members whose states expired leave the sorted set at the next write, so they never count against the bound. */
    @Test
    void expiredContextsLeaveTheBoundAtTheNextWrite() throws Exception {
        String prefix = freshPrefix();
        RedisSelectionStateStore store = openBounded(client, prefix, new StateBounds(2, Duration.ofMillis(200)));
        assertThat(store.compareAndSet("app", "old-1", 0, bytes("x")).block(BLOCK)).isTrue();
        assertThat(store.compareAndSet("app", "old-2", 0, bytes("x")).block(BLOCK)).isTrue();
        Thread.sleep(300);
        assertThat(store.compareAndSet("app", "new-1", 0, bytes("x")).block(BLOCK)).isTrue();
        assertThat(store.compareAndSet("app", "new-2", 0, bytes("x")).block(BLOCK)).isTrue();
        assertThat(raw.zrange(prefix + ":sel-lru:app", 0, -1)).containsExactly("new-1", "new-2");
        assertThat(store.evictions()).as("expired, not evicted").isZero();
    }

    @Test
    void fallsBackToEvalWhenTheScriptCacheWasFlushed() {
        SelectionStateStore store = store();
        assertThat(store.compareAndSet("app", "c", 0, bytes("a")).block(BLOCK)).isTrue();
        raw.scriptFlush();
        long version = store.get("app", "c").block(BLOCK).version();
        assertThat(store.compareAndSet("app", "c", version, bytes("b")).block(BLOCK)).isTrue();
        assertThat(store.get("app", "c").block(BLOCK).state()).isEqualTo(bytes("b"));
    }

    /**
     * Feedback on a weighted policy is at most one EVALSHA, with no read before it and no retry
     * however many writers share the key: observations that arrive while the key's script runs
     * go together in the next call. Every observation counts, each is answered with the state
     * right after its own step (so every count 1..n once), and the state is what applying the
     * observations one by one in Java gives, bit for bit.
     */
    @Test
    void observeIsAtMostOneScriptCallPerObservationEvenUnderContention() throws Exception {
        SelectionStateStore store = store();
        Exp4Policy policy = new Exp4Policy();
        List<String> models = List.of("a", "b");
        WeightedStep step = policy.step(null, "x", Map.of("a", "x", "b", "y"), Map.of());
        // the first call loads the script (EVALSHA answers NOSCRIPT, then EVAL)
        store.observe("app", null, policy, models, step).block(BLOCK);
        raw.configResetstat();
        int n = 2_000;
        List<Long> counts = reactor.core.publisher.Flux.range(0, n)
                .flatMap(i -> store.observe("app", null, policy, models, step), 64)
                .map(bytes -> policy.codec().decode(bytes).observations())
                .collectList().block(BLOCK);
        assertThat(counts).doesNotHaveDuplicates().hasSize(n).allMatch(c -> c >= 2 && c <= n + 1);
        WeightedState s = policy.codec().decode(store.get("app", null).block(BLOCK).state());
        assertThat(s.observations()).isEqualTo(n + 1);
        WeightedState expected = policy.init(models);
        for (int i = 0; i <= n; i++) {
            expected = step.applyTo(expected);
        }
        assertThat(policy.codec().encode(s)).isEqualTo(policy.codec().encode(expected));
        String stats = raw.info("commandstats");
        long scripts = calls(stats, "evalsha");
        assertThat(scripts).as("script calls").isBetween(1L, n - 1L);
        assertThat(calls(stats, "eval")).isZero();
        // one read in each script; the get above is the only read from outside a script
        assertThat(calls(stats, "hmget")).isEqualTo(scripts + 1);
    }

    private static long calls(String commandstats, String command) {
        for (String line : commandstats.split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":calls=")) {
                return Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
            }
        }
        return 0;
    }

    @Test
    void observeRelinksAStateOfOtherModelsInJavaAndSetsTheTtl() {
        String prefix = freshPrefix();
        RedisSelectionStateStore store = open(client, prefix, Duration.ofSeconds(60));
        Exp3Policy policy = new Exp3Policy();
        WeightedState old = policy.observe(policy.init(List.of("a", "b")), null, "x", Map.of("a", "y"));
        assertThat(store.compareAndSet("app", "u", 0, policy.codec().encode(old)).block(BLOCK)).isTrue();
        raw.persist(store.key("app", "u"));
        List<String> models = List.of("b", "a", "c");
        WeightedStep step = policy.step(null, "x", Map.of("c", "y"), Map.of("c", 0.5));
        byte[] written = store.observe("app", "u", policy, models, step).block(BLOCK);
        assertThat(policy.codec().decode(written)).isEqualTo(step.applyTo(policy.link(old, models)));
        assertThat(raw.pttl(store.key("app", "u"))).isBetween(1L, 60_000L);
        // and a state of another policy is not overwritten: decoding it fails as before
        Exp4Policy exp4 = new Exp4Policy();
        assertThatThrownBy(() -> store.observe("app", "u", exp4, models,
                exp4.step(null, "x", Map.of(), Map.of())).block(BLOCK)).isInstanceOf(StateCodecException.class);
        assertThat(store.get("app", "u").block(BLOCK).state()).isEqualTo(written);
        // names whose UTF-8 is their modified UTF-8 go through the script, others (NUL, outside
        // the BMP) through Java; both give the policy's state, the second call reading the first's
        for (List<String> names : List.of(List.of("modèle", "b"), List.of("a\u0000", "\uD83D\uDE00"))) {
            WeightedStep wrong = policy.step(null, "x", Map.of(names.get(0), "y"), Map.of(names.get(0), 0.5));
            store.observe("names", names.get(1), policy, names, wrong).block(BLOCK);
            assertThat(policy.codec().decode(store.observe("names", names.get(1), policy, names, wrong).block(BLOCK)))
                    .isEqualTo(wrong.applyTo(wrong.applyTo(policy.init(names))));
        }
        // the script reloads itself after a flush
        raw.scriptFlush();
        assertThat(policy.codec().decode(store.observe("app", "u", policy, models, step).block(BLOCK)).observations())
                .isEqualTo(3);
    }

    @Test
    void stateOfAnUnknownSchemaVersionIsRejectedWhenDecoded() {
        SelectionStateStore store = store();
        Exp4Policy policy = new Exp4Policy();
        byte[] encoded = policy.codec().encode(policy.init(List.of("a", "b")));
        encoded[0] = 9;
        assertThat(store.compareAndSet("app", null, 0, encoded).block(BLOCK)).isTrue();
        byte[] stored = store.get("app", null).block(BLOCK).state();
        assertThat(stored).isEqualTo(encoded);
        assertThatThrownBy(() -> policy.codec().decode(stored))
                .isInstanceOf(StateCodecException.class)
                .hasMessageContaining("unsupported exp4 state schema version 9 (this gateway reads version 1)");
        // an update through the policy fails cleanly and leaves the state alone
        assertThatThrownBy(() -> store.update("app", null,
                old -> policy.codec().encode(policy.codec().decode(old))).block(BLOCK))
                .isInstanceOf(StateCodecException.class);
        assertThat(store.get("app", null).block(BLOCK).state()).isEqualTo(encoded);
    }
}
