package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.servegate.gateway.testsupport.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pipelines in the {@link RedisRegistry} on a real {@code redis-server}, each test under its own
 * key prefix; and a second gateway's registry on the same store sees them.
 */
class RedisPipelineRegistryTest extends PipelineRegistryContractTest {

    private static final AtomicInteger PREFIXES = new AtomicInteger();
    private static RedisServer server;
    private static RedisClient client;
    private String prefix;

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
        client = RedisRegistry.newClient(server.uri());
    }

    @AfterAll
    static void stopRedis() {
        if (client != null) {
            client.shutdown();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    protected Registry newRegistry() {
        prefix = "pipelines" + PREFIXES.incrementAndGet();
        return new RedisRegistry(client, prefix, Duration.ofMillis(100));
    }

    @Test
    void anotherGatewaySeesThePipeline() throws Exception {
        Pipeline p = new Pipeline("shared", "floats", "-1", 50_000,
                List.of(PipelineStage.model("only", "cnn", StageOutput.LABEL)), List.of());
        RegistryContractTest.ok(registry.addPipeline(p));
        try (RedisRegistry other = new RedisRegistry(client, prefix, Duration.ofMillis(100))) {
            assertThat(other.snapshot().pipelines()).containsExactly(p);
        }
    }
}
