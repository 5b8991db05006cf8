package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.VersionStats;
import io.servegate.core.selection.Task;
import io.servegate.gateway.testsupport.RegistryRedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The {@link RolloutStore} contract, on both stores: compare-and-set replacement and per-gateway evidence. */
class RolloutStoreTest {

    @RegisterExtension
    static final RegistryRedisExtension REDIS = new RegistryRedisExtension();

    static Stream<String> stores() {
        return Stream.of("memory", "redis");
    }

    private static RolloutStore store(String kind) {
        return kind.equals("memory") ? new InMemoryRolloutStore()
                : RedisRolloutStore.connect(io.servegate.gateway.config.RedisClients.create(REDIS.uri()),
                        REDIS.newPrefix("rollouts"), Duration.ofSeconds(2));
    }

    private static Rollout rollout(String id) {
        return Rollout.start(id, "m", "2", "1", RolloutMode.CANARY, Task.REGRESSION, 2.5, Guards.DEFAULTS,
                List.of(0.1, 1.0), 42);
    }

    private static RolloutEvidence evidence(long candidateQueries, double loss) {
        return new RolloutEvidence(new VersionStats(candidateQueries, 1, 2, 0, 0, 3, loss),
                new VersionStats(10, 0, 0, 0, 0, 4, 0.5));
    }

    @ParameterizedTest
    @MethodSource("stores")
    void replacesOnlyWhatItExpectsAndReadsBackTheSameRollout(String kind) {
        try (RolloutStore store = store(kind)) {
            Rollout first = rollout("a");
            assertThat(store.replace("m", rollout("other"), first).block()).as("nothing stored yet").isFalse();
            assertThat(store.replace("m", null, first).block()).isTrue();
            assertThat(store.replace("m", null, rollout("b")).block()).as("one is stored").isFalse();
            assertThat(store.get("m").block()).isEqualTo(first);

            Rollout paused = first.pause(50);
            assertThat(store.replace("m", first, paused).block()).isTrue();
            assertThat(store.replace("m", first, first.abort(60, "stale")).block()).isFalse();
            assertThat(store.all().block()).containsExactly(paused);
            assertThat(store.get("none").block()).isNull();
        }
    }

    @ParameterizedTest
    @MethodSource("stores")
    void sumsEveryGatewaysLatestEvidenceAndDropsItWithItsRollout(String kind) {
        try (RolloutStore store = store(kind)) {
            Rollout a = rollout("a");
            store.replace("m", null, a).block();
            store.putEvidence("a", "gw1", evidence(5, 1.0)).block();
            store.putEvidence("a", "gw1", evidence(7, 1.5)).block();
            store.putEvidence("a", "gw2", evidence(11, 0.25)).block();
            RolloutEvidence sum = store.evidence("a").block();
            assertThat(sum.candidate()).isEqualTo(new VersionStats(18, 2, 4, 0, 0, 6, 1.75));
            assertThat(sum.baseline()).isEqualTo(new VersionStats(20, 0, 0, 0, 0, 8, 1.0));

            Rollout next = rollout("b");
            assertThat(store.replace("m", a.abort(1, "operator"), next).block()).isFalse();
            Rollout aborted = a.abort(1, "operator");
            store.replace("m", a, aborted).block();
            assertThat(store.evidence("a").block()).as("kept while its rollout is stored").isEqualTo(sum);
            assertThat(store.replace("m", aborted, next).block()).isTrue();
            assertThat(store.evidence("a").block()).isEqualTo(RolloutEvidence.EMPTY);
        }
    }
}
