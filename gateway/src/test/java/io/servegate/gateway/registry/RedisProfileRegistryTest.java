package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.registry.RegistryException.Kind;
import io.servegate.gateway.testsupport.RegistryRedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Profiles and plans in the {@link RedisRegistry} on a real {@code redis-server}, each test under
 * its own key prefix; a second gateway's registry on the same store sees them, and a plan made on
 * a stale snapshot is refused.
 */
class RedisProfileRegistryTest extends ProfileRegistryContractTest {

    @RegisterExtension
    static final RegistryRedisExtension REDIS = new RegistryRedisExtension();

    private String prefix;

    @Override
    protected Registry newRegistry() {
        prefix = REDIS.newPrefix("profiles");
        return new RedisRegistry(REDIS.client(), prefix, Duration.ofMillis(100));
    }

    @Test
    void anotherGatewaySeesProfilesAndPlans() {
        ModelProfile p = profile("cnn", "1", "cuda", 2);
        RegistryContractTest.ok(registry.putProfile(p));
        RegistryContractTest.ok(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "accurate", 70_000L), List.of(new PipelinePlanChange.BatchCap("cnn", "2", 4)))));
        try (RedisRegistry other = new RedisRegistry(REDIS.client(), prefix, Duration.ofMillis(100))) {
            assertThat(other.snapshot().profiles()).containsExactly(p);
            assertThat(other.snapshot().pipeline("cascade").orElseThrow().planned()).isTrue();
            assertThat(other.snapshot().model("cnn", "2").orElseThrow().maxBatchSize()).isEqualTo(4);
        }
    }

    @Test
    void aPlanIsRefusedWhenTheStoreChangedBehindTheSnapshot() {
        // a change that neither bumps the revision nor publishes: this instance's snapshot stays stale
        try (var connection = REDIS.client().connect()) {
            String key = prefix + ":pipelines";
            String stored = connection.sync().hget(key, "cascade");
            connection.sync().hset(key, "cascade", stored.replace("100000", "100001"));
        }
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "accurate", 70_000L), List.of())), Kind.CONFLICT,
                "pipeline 'cascade' changed meanwhile");
        assertThat(registry.snapshot().pipeline("cascade").orElseThrow().planned()).isFalse();
    }

    @Test
    void aPlanAppliesToAVersionStoredBeforeVersionsHadAHardwareKind() throws Exception {
        long revision;
        try (var connection = REDIS.client().connect()) {
            connection.sync().hset(prefix + ":models", "cnn:2", "{\"v\":1,\"name\":\"cnn\",\"version\":\"2\","
                    + "\"labels\":[],\"inputType\":\"floats\",\"containerName\":\"\",\"modelDataPath\":\"\","
                    + "\"batchSize\":-1}");
            revision = connection.sync().incr(prefix + ":revision");
        }
        long until = System.nanoTime() + 10_000_000_000L;
        while (registry.snapshot().revision() < revision && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(registry.snapshot().model("cnn", "2").orElseThrow().hardware())
                .isEqualTo(ModelVersion.DEFAULT_HARDWARE);
        RegistryContractTest.ok(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "accurate", 70_000L), List.of(new PipelinePlanChange.BatchCap("cnn", "2", 4)))));
        assertThat(registry.snapshot().model("cnn", "2").orElseThrow().maxBatchSize()).isEqualTo(4);
    }
}
