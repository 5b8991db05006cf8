package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The registry contract against {@link InMemoryRegistry}, plus its concurrency guarantees. */
class InMemoryRegistryTest extends RegistryContractTest {

    @Override
    protected Registry newRegistry() {
        return new InMemoryRegistry();
    }

    @Test
    void concurrentWritersGetOneRevisionEachAndListenersSeeIncreasingRevisions() throws Exception {
        ok(registry.addModel(model("m", "1", "ints")));
        List<Long> notified = Collections.synchronizedList(new ArrayList<>());
        registry.addListener(s -> notified.add(s.revision()));
        long start = revision();

        int threads = 8;
        int perThread = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        ok(registry.addReplica(replica("r-" + thread + "-" + i, "m", "1")));
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(snap().replicas()).hasSize(threads * perThread);
        assertThat(revision()).isEqualTo(start + threads * perThread);
        assertThat(notified).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
        assertThat(notified.get(notified.size() - 1)).isEqualTo(revision());
    }

    @Test
    void racingAddAppGivesExactlyOneSuccess() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                results.add(pool.submit(() -> {
                    try {
                        ok(registry.addApp(app("same", "ints")));
                        return true;
                    } catch (RegistryException e) {
                        assertThat(e.kind()).isEqualTo(RegistryException.Kind.CONFLICT);
                        return false;
                    }
                }));
            }
            int successes = 0;
            for (Future<Boolean> f : results) {
                successes += f.get(10, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(successes).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }
}
