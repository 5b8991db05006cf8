package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.testsupport.RegistryRedisExtension;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pipelines in the {@link RedisRegistry} on a real {@code redis-server}, each test under its own
 * key prefix; and a second gateway's registry on the same store sees them.
 */
class RedisPipelineRegistryTest extends PipelineRegistryContractTest {

    @RegisterExtension
    static final RegistryRedisExtension REDIS = new RegistryRedisExtension();

    private String prefix;

    @Override
    protected Registry newRegistry() {
        prefix = REDIS.newPrefix("pipelines");
        return new RedisRegistry(REDIS.client(), prefix, Duration.ofMillis(100));
    }

    @Test
    void anotherGatewaySeesThePipeline() throws Exception {
        Pipeline p = new Pipeline("shared", "floats", "-1", 50_000,
                List.of(PipelineStage.model("only", "cnn", StageOutput.LABEL)), List.of());
        RegistryContractTest.ok(registry.addPipeline(p));
        try (RedisRegistry other = new RedisRegistry(REDIS.client(), prefix, Duration.ofMillis(100))) {
            assertThat(other.snapshot().pipelines()).containsExactly(p);
        }
    }
}
