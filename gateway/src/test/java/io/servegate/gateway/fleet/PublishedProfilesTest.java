package io.servegate.gateway.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.config.RedisClients;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Only the gateway that schedules a version profiles its replicas: two gateways on one real
 * {@code redis-server}, one in-process container that counts the batches it is sent by size. The
 * gateway that does not own the version sends it none (its profile stays empty); when the owner
 * leaves, the other takes the version over with the profile the owner published, before its
 * first query, and without sending a batch of its own.
 */
class PublishedProfilesTest {

    private static final String MODEL = "pm";
    private static final String PREFIX = "sg-profiles";

    private RedisServer redis;
    private ModelContainer<float[], String> container;
    private final List<ConfigurableApplicationContext> gateways = new ArrayList<>();
    private final Map<Integer, AtomicInteger> batchesBySize = new ConcurrentHashMap<>();
    private final AtomicInteger batches = new AtomicInteger();

    @AfterEach
    void stop() {
        gateways.forEach(ConfigurableApplicationContext::close);
        if (container != null) {
            container.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void onlyTheOwnerProfilesAndTheNextOwnerStartsFromWhatItPublished() throws Exception {
        redis = RedisServer.start();
        container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, (List<float[]> batch) -> {
            batches.incrementAndGet();
            batchesBySize.computeIfAbsent(batch.size(), s -> new AtomicInteger()).incrementAndGet();
            return batch.stream().map(x -> "ok").toList();
        }).name(MODEL).version("1").host("127.0.0.1").port(0).inputLength(2).build().start();
        // the container warms itself up through the same predictor: only what the gateways send counts
        batches.set(0);
        batchesBySize.clear();
        for (int g = 0; g < 2; g++) {
            gateways.add(new SpringApplicationBuilder(GatewayApplication.class).run(gateway("gw" + g)));
        }
        WebClient admin = WebClient.create("http://127.0.0.1:" + gateways.get(0).getBean(AdminServer.class).port());
        post(admin, "/admin/add_model", "{\"model_name\":\"pm\",\"model_version\":\"1\",\"input_type\":\"floats\"}");
        post(admin, "/admin/add_container", "{\"model_name\":\"pm\",\"model_version\":\"1\",\"address\":\"127.0.0.1:"
                + container.port() + "\"}");
        RedisFleetStore direct = RedisFleetStore.connect(RedisClients.create(redis.uri()), PREFIX);
        try {
            waitFor(() -> "one owner, its profile published, both gateways connected to the replica: owned "
                    + node(0).member().owned() + " " + node(1).member().owned() + ", input lengths "
                    + pool(0).declaredInput(MODEL, "1").rowLength() + " " + pool(1).declaredInput(MODEL, "1").rowLength()
                    + ", published " + direct.profiles(List.of(MODEL + ":1")), () ->
                    node(0).member().owned().size() + node(1).member().owned().size() == 1
                    && pool(0).declaredInput(MODEL, "1").rowLength() == 2
                    && pool(1).declaredInput(MODEL, "1").rowLength() == 2
                    && !direct.profiles(List.of(MODEL + ":1")).isEmpty());
            int owner = node(0).member().owned().isEmpty() ? 1 : 0;
            int other = 1 - owner;
            // beats enough for a second profiling pass, were there one
            Thread.sleep(1_000);
            // one pass: a batch of one that pays the one-off costs, one measured, then 2, 4, … once or twice each
            assertThat(batchesBySize.get(1)).as("batches of one, of all by size: %s", batchesBySize).hasValue(2);
            assertThat(batchesBySize).allSatisfy((size, n) -> assertThat(n.get()).as("batches of %d", size)
                    .isBetween(1, 2));
            assertThat(pool(other).singleQueryNanos(MODEL, "1")).as("the other gateway's profile").isEqualTo(-1);
            long published = pool(owner).singleQueryNanos(MODEL, "1");
            assertThat(published).isPositive();
            int sent = batches.get();

            gateways.remove(owner).close();
            ConfigurableApplicationContext next = gateways.get(0);
            waitFor(() -> "the other gateway takes the version over", () ->
                    next.getBean(FleetNode.class).member().owned().contains(MODEL + ":1"));
            long seeded = next.getBean(ReplicaPool.class).singleQueryNanos(MODEL, "1");
            assertThat(seeded).as("the new owner's estimate of a batch of one as it takes over").isPositive()
                    .isBetween(published / 2, published * 2);
            assertThat(batches.get()).as("batches sent since the owner left").isEqualTo(sent);
        } finally {
            direct.close();
        }
    }

    private String[] gateway(String name) {
        return new String[] {"--server.port=0", "--servegate.admin.port=0", "--servegate.oip.grpc-port=0",
            "--servegate.registry.store=redis", "--servegate.registry.redis-uri=" + redis.uri(),
            "--servegate.registry.key-prefix=" + PREFIX, "--servegate.fleet.port=0",
            "--servegate.fleet.advertise-host=127.0.0.1", "--servegate.fleet.name=" + name,
            "--servegate.fleet.heartbeat=200ms", "--servegate.fleet.lease=2s", "--servegate.warmup.enabled=false",
            "--servegate.fleet.secret=profiles-test-secret", "--spring.main.banner-mode=off",
            "--logging.level.root=WARN"};
    }

    private FleetNode node(int g) {
        return gateways.get(g).getBean(FleetNode.class);
    }

    private ReplicaPool pool(int g) {
        return gateways.get(g).getBean(ReplicaPool.class);
    }

    private static void waitFor(Supplier<String> what, BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what.get()).isLessThan(until);
            Thread.sleep(20);
        }
    }

    private static void post(WebClient admin, String uri, String body) {
        String reply = admin.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).retrieve()
                .bodyToMono(String.class).block(Duration.ofSeconds(10));
        assertThat(reply).as(uri).isNotNull();
    }
}
