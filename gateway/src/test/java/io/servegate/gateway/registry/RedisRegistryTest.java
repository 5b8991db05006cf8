package io.servegate.gateway.registry;

import static io.servegate.gateway.registry.RegistryContractTest.app;
import static io.servegate.gateway.registry.RegistryContractTest.model;
import static io.servegate.gateway.registry.RegistryContractTest.ok;
import static io.servegate.gateway.registry.RegistryContractTest.replica;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.servegate.gateway.config.RedisClients;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.gateway.testsupport.RegistryRedisExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.util.function.Tuple2;

/**
 * {@link RedisRegistry} as a shared store: several instances on one real {@code redis-server},
 * with the default poll interval (500 ms) so that "visible within 1 s" is tested as configured in
 * production.
 */
class RedisRegistryTest {

    @RegisterExtension
    static final RegistryRedisExtension REDIS = new RegistryRedisExtension();

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private String prefix;
    private StatefulRedisConnection<String, String> raw;

    @BeforeAll
    static void warmUp() throws InterruptedException {
        // Warm up (class loading, JIT, script cache) so the 1 s bounds below measure propagation,
        // not a cold JVM: one write on one instance, seen by another.
        try (RedisRegistry a = new RedisRegistry(REDIS.client(), "warmup", RedisRegistry.DEFAULT_POLL_INTERVAL);
             RedisRegistry b = new RedisRegistry(REDIS.client(), "warmup", RedisRegistry.DEFAULT_POLL_INTERVAL)) {
            ok(a.addModel(model("m", "1", "ints")));
            ok(a.addApp(app("a", "ints", "m")));
            ok(a.addReplica(replica("r", "m", "1")));
            await(Duration.ofSeconds(30), "warm-up write visible", () -> b.snapshot().revision() == 3);
        }
    }

    @BeforeEach
    void newPrefix() {
        prefix = REDIS.newPrefix("shared");
        raw = REDIS.client().connect();
        toClose.add(raw);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private RedisRegistry open() {
        RedisRegistry r = new RedisRegistry(REDIS.client(), prefix, RedisRegistry.DEFAULT_POLL_INTERVAL);
        toClose.add(r);
        return r;
    }

    private static void await(Duration limit, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit.toMillis() + " ms: " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    void aWriteOnOneInstanceIsVisibleOnAnotherWithinOneSecond() throws InterruptedException {
        RedisRegistry a = open();
        RedisRegistry b = open();
        ok(a.addModel(model("m", "1", "ints")));
        ok(a.addApp(app("shared-app", "ints", "m")));
        await(Duration.ofSeconds(1), "app visible on b", () -> b.snapshot().app("shared-app").isPresent());
        assertThat(b.snapshot().app("shared-app").orElseThrow().linkedModels()).containsExactly("m");
        assertThat(b.snapshot().currentVersion("m")).contains("1");
        await(Duration.ofSeconds(1), "same revision", () -> b.snapshot().revision() == a.snapshot().revision());

        ok(b.deleteApp("shared-app"));
        await(Duration.ofSeconds(1), "delete visible on a", () -> a.snapshot().app("shared-app").isEmpty());
    }

    @Test
    void anotherInstancesListenerFires() throws InterruptedException {
        RedisRegistry a = open();
        RedisRegistry b = open();
        LinkedBlockingQueue<RegistrySnapshot> seen = new LinkedBlockingQueue<>();
        b.addListener(seen::add);
        ok(a.addModel(model("m", "1", "floats")));
        RegistrySnapshot s = seen.poll(1, TimeUnit.SECONDS);
        assertThat(s).as("b's listener within 1 s").isNotNull();
        assertThat(s.model("m", "1")).isPresent();
        assertThat(s).isSameAs(b.snapshot());
    }

    @Test
    void pollingCatchesChangesWhosePublishWasMissed() throws InterruptedException {
        RedisRegistry b = open();
        RedisCommands<String, String> redis = raw.sync();
        // a change written behind the registry's back, without PUBLISH: only the poller can see it
        redis.hset(prefix + ":apps", "polled", "{\"v\":1,\"name\":\"polled\",\"inputType\":\"ints\","
                + "\"defaultOutput\":\"x\",\"latencySloMicros\":5}");
        redis.incr(prefix + ":revision");
        await(Duration.ofSeconds(1), "poller reload", () -> b.snapshot().app("polled").isPresent());
        assertThat(b.snapshot().app("polled").orElseThrow())
                .isEqualTo(new Application("polled", "ints", "x", 5, List.of()));
        assertThat(b.snapshot().revision()).isEqualTo(1);
    }

    @Test
    void racingAddAppFromTwoInstancesGivesOneSuccessAndOneConflict() {
        RedisRegistry a = open();
        RedisRegistry b = open();
        for (int i = 0; i < 25; i++) {
            String name = "race-" + i;
            Tuple2<String, String> outcome = Mono.zip(attempt(a.addApp(app(name, "ints"))),
                    attempt(b.addApp(app(name, "bytes")))).block(Duration.ofSeconds(10));
            assertThat(List.of(outcome.getT1(), outcome.getT2())).as("round %d", i)
                    .containsExactlyInAnyOrder("ok", "CONFLICT");
        }
        assertThat(a.snapshot().apps()).hasSize(25);
    }

    @Test
    void racingAddModelOfTheSameVersionGivesOneSuccess() {
        RedisRegistry a = open();
        RedisRegistry b = open();
        for (int i = 0; i < 10; i++) {
            Tuple2<String, String> outcome = Mono.zip(attempt(a.addModel(model("m", "v" + i, "ints"))),
                    attempt(b.addModel(model("m", "v" + i, "ints")))).block(Duration.ofSeconds(10));
            assertThat(List.of(outcome.getT1(), outcome.getT2())).containsExactlyInAnyOrder("ok", "CONFLICT");
        }
        assertThat(a.snapshot().versions("m")).hasSize(10);
    }

    private static Mono<String> attempt(Mono<Void> write) {
        return write.thenReturn("ok")
                .onErrorResume(RegistryException.class, e -> Mono.just(e.kind().name()));
    }

    @Test
    void stateSurvivesClosingAllInstances() {
        RedisRegistry a = open();
        ok(a.addModel(model("m", "1", "doubles")));
        ok(a.addModel(model("m", "2", "doubles")));
        ok(a.addModel(new ModelVersion("n", "7", List.of("x"), "doubles", "img", null, 32)));
        ok(a.setModelVersion("m", "1"));
        ok(a.addApp(new Application("a1", "doubles", "default \"quoted\" ü", Long.MAX_VALUE / 3, List.of("n"))));
        ok(a.addModelLinks("a1", List.of("m")));
        ok(a.addApp(app("a2", "doubles")));
        ok(a.addModelLinks("a2", List.of("m")));
        ok(a.deleteModelLinks("a2", List.of("m")));
        ok(a.addReplica(replica("r1", "m", "1")));
        ok(a.addReplica(replica("r2", "n", "7")));
        RegistrySnapshot before = a.snapshot();
        a.close();

        RedisRegistry c = open();
        RegistrySnapshot after = c.snapshot();
        assertThat(after.revision()).isEqualTo(before.revision());
        assertThat(after.apps()).isEqualTo(before.apps());
        assertThat(after.app("a1").orElseThrow().linkedModels()).containsExactly("n", "m");
        assertThat(after.app("a2").orElseThrow().linkedModels()).isEmpty();
        assertThat(after.models()).isEqualTo(before.models());
        assertThat(after.currentVersion("m")).contains("1");
        assertThat(after.currentVersion("n")).contains("7");
        assertThat(after.replicas()).isEqualTo(before.replicas());
        assertThat(after.replicas("n", "7")).containsExactly(replica("r2", "n", "7"));
    }

    @Test
    void layoutIsVersionedJsonInOneHashPerKind() throws InterruptedException {
        RedisRegistry a = open();
        RedisCommands<String, String> redis = raw.sync();
        LinkedBlockingQueue<String> published = new LinkedBlockingQueue<>();
        var sub = REDIS.client().connectPubSub();
        toClose.add(sub);
        sub.addListener(new io.lettuce.core.pubsub.RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                published.add(channel + "=" + message);
            }
        });
        sub.sync().subscribe(prefix + ":changed");

        ok(a.addModel(model("m", "1", "ints")));
        ok(a.addApp(app("a", "ints", "m")));
        ok(a.addReplica(replica("r", "m", "1")));

        assertThat(redis.get(prefix + ":revision")).isEqualTo("3");
        assertThat(redis.hget(prefix + ":apps", "a")).contains("\"v\":1").contains("\"inputType\":\"ints\"");
        assertThat(redis.hget(prefix + ":links", "a")).isEqualTo("[\"m\"]");
        assertThat(redis.hget(prefix + ":models", "m:1")).contains("\"v\":1").contains("\"batchSize\":-1");
        assertThat(redis.hget(prefix + ":current", "m")).isEqualTo("1");
        assertThat(redis.hget(prefix + ":replicas", "r")).contains("\"v\":1").contains("\"modelVersion\":\"1\"");
        assertThat(published.poll(1, TimeUnit.SECONDS)).isEqualTo(prefix + ":changed=1");
        assertThat(published.poll(1, TimeUnit.SECONDS)).isEqualTo(prefix + ":changed=2");
        assertThat(published.poll(1, TimeUnit.SECONDS)).isEqualTo(prefix + ":changed=3");
    }

    @Test
    void unreadableEntriesAreSkippedNotFatal() {
        RedisCommands<String, String> redis = raw.sync();
        redis.hset(prefix + ":apps", "future", "{\"v\":2,\"name\":\"future\"}");
        redis.hset(prefix + ":apps", "broken", "{not json");
        redis.hset(prefix + ":apps", "fine", "{\"v\":1,\"name\":\"fine\",\"inputType\":\"bytes\","
                + "\"defaultOutput\":\"\",\"latencySloMicros\":1}");
        RedisRegistry r = open();
        assertThat(r.snapshot().apps()).extracting(Application::name).containsExactly("fine");
    }

    @Test
    void writesSurviveTheServerForgettingItsScripts() {
        RedisRegistry a = open();
        ok(a.addApp(app("before", "ints")));
        raw.sync().scriptFlush();
        ok(a.addApp(app("after", "ints")));
        assertThat(a.snapshot().app("after")).isPresent();
    }

    @Test
    void startingWithoutRedisFailsClearly() {
        RedisClient nowhere = RedisClients.create("redis://127.0.0.1:" + unusedPort());
        try {
            assertThatThrownBy(() -> new RedisRegistry(nowhere))
                    .isInstanceOf(RegistryUnavailableException.class)
                    .hasMessageStartingWith("registry store unreachable: ");
        } finally {
            nowhere.shutdown();
        }
        assertThatThrownBy(() -> RedisRegistry.connect(RedisClients.create("redis://127.0.0.1:" + unusedPort()), "x",
                Duration.ofSeconds(1)))
                .isInstanceOf(RegistryUnavailableException.class)
                .hasMessageStartingWith("registry store unreachable: ");
    }

    @Test
    void connectCreatesAWorkingRegistry() {
        try (RedisRegistry r = RedisRegistry.connect(RedisClients.create(REDIS.uri()), prefix,
                Duration.ofMillis(200))) {
            ok(r.addApp(app("via-connect", "strings")));
            assertThat(open().snapshot().app("via-connect")).isPresent();
        }
    }

    @Test
    void whileRedisIsDownReadsServeTheLastSnapshotAndWritesFailThenRecover() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            RedisClient ownClient = RedisClients.create(own.uri());
            try {
                RedisRegistry r = new RedisRegistry(ownClient, prefix, Duration.ofMillis(100));
                toClose.add(r);
                ok(r.addModel(model("m", "1", "ints")));
                ok(r.addApp(app("a", "ints", "m")));
                RegistrySnapshot last = r.snapshot();

                own.stop();
                long t0 = System.nanoTime();
                assertThatThrownBy(() -> r.addApp(app("b", "ints")).block(Duration.ofSeconds(10)))
                        .isInstanceOf(RegistryUnavailableException.class)
                        .hasMessageStartingWith("registry store unreachable: ");
                assertThat(Duration.ofNanos(System.nanoTime() - t0))
                        .isLessThan(RedisRegistry.DEFAULT_COMMAND_TIMEOUT.plusSeconds(2));
                assertThat(r.snapshot()).isSameAs(last);
                assertThat(r.snapshot().app("a")).isPresent();

                // back (empty: no persistence): the registry reconnects and follows the store again
                own.restart();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (true) {
                    try {
                        ok(r.addModel(model("m2", "1", "ints")));
                        break;
                    } catch (RegistryUnavailableException e) {
                        if (System.nanoTime() > deadline) {
                            throw e;
                        }
                        Thread.sleep(50);
                    }
                }
                assertThat(r.snapshot().model("m2", "1")).isPresent();
                assertThat(r.snapshot().app("a")).as("the restarted store is empty").isEmpty();
            } finally {
                for (AutoCloseable c : toClose) {
                    if (c instanceof RedisRegistry reg) {
                        reg.close();
                    }
                }
                ownClient.shutdown();
            }
        }
    }

    @Test
    void closedRegistryRefusesWritesButKeepsItsSnapshot() {
        RedisRegistry a = open();
        ok(a.addApp(app("a", "ints")));
        a.close();
        a.close();
        assertThat(a.snapshot().app("a")).isPresent();
        assertThatThrownBy(() -> a.addApp(app("b", "ints")).block(Duration.ofSeconds(5)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    private static int unusedPort() {
        try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
