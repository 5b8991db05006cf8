package io.servegate.gateway.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.config.ServegateProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The warm-up's private replica pool on the loopback container: its replica passes the checks
 * and profiling any replica passes, then its queries go through the scheduler in batches and are
 * answered by the loopback container.
 */
class SchedulerExerciseTest {

    @Test
    void queriesThroughThePrivatePoolAreAnsweredOnceItsReplicaIsReady() throws Exception {
        ServegateProperties props = new Binder(new MapConfigurationPropertySource(Map.of()))
                .bindOrCreate("servegate", ServegateProperties.class);
        try (LoopbackContainer container = LoopbackContainer.start();
                SchedulerExercise exercise = new SchedulerExercise(props, System::nanoTime, container.address(), null)) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!exercise.ready() && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertThat(exercise.ready()).as("the replica checked and profiled").isTrue();
            List<CompletableFuture<String>> answers = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                answers.add(exercise.query(new float[] {i, 1, 2}));
            }
            // due within the default SLO (100 ms): on a loaded machine some may be refused as too late
            int answered = 0;
            for (CompletableFuture<String> a : answers) {
                try {
                    assertThat(a.get(10, TimeUnit.SECONDS)).isEqualTo("0");
                    answered++;
                } catch (java.util.concurrent.ExecutionException late) {
                    assertThat(late.getCause()).isInstanceOf(io.servegate.gateway.dispatch.DispatchException.class);
                }
            }
            assertThat(answered).as("queries answered by the loopback container").isPositive();
        }
    }
}
