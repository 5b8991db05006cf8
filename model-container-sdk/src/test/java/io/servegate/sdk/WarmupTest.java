package io.servegate.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The container warms its predictor up before it is ready, over real gRPC: every batch size up
 * to the maximum, twice each, on zeros of the declared input, reported in the model metadata.
 */
class WarmupTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    /** Batch sizes the predictor saw, and the first input of each. */
    private final List<Integer> sizes = Collections.synchronizedList(new ArrayList<>());
    private final List<float[]> firsts = Collections.synchronizedList(new ArrayList<>());

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    /** The index of the largest element; a batch of 3 costs a cold 50 ms the first time. */
    private List<String> argmax(List<float[]> batch) throws InterruptedException {
        if (batch.size() == 3 && !sizes.contains(3)) {
            Thread.sleep(50);
        }
        sizes.add(batch.size());
        firsts.add(batch.get(0));
        List<String> out = new ArrayList<>();
        for (float[] v : batch) {
            int best = 0;
            for (int i = 1; i < v.length; i++) {
                best = v[i] > v[best] ? i : best;
            }
            out.add(Integer.toString(best));
        }
        return out;
    }

    private ModelContainer.Builder<float[], String> builder() {
        return ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, this::argmax).name("argmax")
                .host("127.0.0.1").port(0).inputLength(4);
    }

    private ContainerClient client(ModelContainer<?, ?> container) {
        closeables.add(container);
        ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(0, client);
        return client;
    }

    @Test
    void everySizeUpToTheMaximumRunsTwiceOnZerosBeforeReadyAndIsReported() throws Exception {
        ModelContainer<float[], String> container = builder().maxBatchSize(4).build().start();
        assertThat(sizes).containsExactly(1, 1, 2, 2, 3, 3, 4, 4); // all before start() returned
        assertThat(firsts).allSatisfy(input -> assertThat(input).containsExactly(0f, 0f, 0f, 0f));
        ContainerClient client = client(container);
        assertThat(client.serverReady(TIMEOUT).get()).isTrue();

        ModelMetadataResponse md = client.modelMetadata("argmax", "", TIMEOUT).get();
        assertThat(md.getParametersMap().get(ModelContainer.MAX_BATCH_SIZE).getInt64Param()).isEqualTo(4);
        assertThat(md.getParametersMap().get(Warmup.BATCH_SIZES).getStringParam()).isEqualTo("1,2,3,4");
        long[] first = longs(md.getParametersMap().get(Warmup.FIRST_NS).getStringParam());
        long[] last = longs(md.getParametersMap().get(Warmup.LAST_NS).getStringParam());
        assertThat(first).hasSize(4);
        assertThat(last).hasSize(4);
        assertThat(first[2]).as("the cold batch of 3").isGreaterThanOrEqualTo(50_000_000L);
        assertThat(last[2]).as("warm").isLessThan(first[2]);
    }

    @Test
    void chosenSizesRunsAndInput() throws Exception {
        float[] sample = {0f, 9f, 0f, 0f};
        client(builder().maxBatchSize(8).warmupBatchSizes(List.of(4, 2)).warmupRuns(1).warmupInput(sample).build()
                .start());
        assertThat(sizes).containsExactly(2, 4);
        assertThat(firsts).allSatisfy(input -> assertThat(input).isSameAs(sample));
    }

    @Test
    void withoutADeclaredMaximumOneBatchOfOneWarms() throws Exception {
        client(builder().build().start());
        assertThat(sizes).containsExactly(1, 1);
    }

    @Test
    void offOrWithNothingToMakeAnInputFromItRunsNothing() throws Exception {
        ModelContainer<float[], String> off = builder().maxBatchSize(4).warmupBatchSizes(List.of()).build().start();
        ModelMetadataResponse md = client(off).modelMetadata("argmax", "", TIMEOUT).get();
        assertThat(md.getParametersMap()).doesNotContainKey(Warmup.BATCH_SIZES);
        client(ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, this::argmax).name("any")
                .host("127.0.0.1").port(0).build().start()); // no input length: no zeros to make
        assertThat(sizes).isEmpty();
    }

    @Test
    void aPredictorThatFailsItsWarmUpIsNeverReady() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ModelContainer<float[], String> broken = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (List<float[]> batch) -> {
                    throw new IllegalStateException("weights missing");
                }).name("broken").host("127.0.0.1").port(port).inputLength(4).build();
        assertThatThrownBy(broken::start).isInstanceOf(IOException.class).hasMessageContaining("weights missing");
    }

    @Test
    void badPlansAreRejected() {
        assertThatThrownBy(() -> builder().maxBatchSize(2).warmupBatchSizes(List.of(3)).build())
                .hasMessageContaining("exceeds the maximum batch size 2");
        assertThatThrownBy(() -> builder().warmupInput(new float[3]).build())
                .hasMessageContaining("the warm-up input has 3 values; the model expects 4");
        assertThatThrownBy(() -> Warmup.parseBatchSizes("1,x")).hasMessageContaining("comma-separated integers");
        assertThat(Warmup.parseBatchSizes(" none ")).isEmpty();
        assertThat(Warmup.parseBatchSizes("4,1")).containsExactly(4, 1);
    }

    private static long[] longs(String csv) {
        return Arrays.stream(csv.split(",")).mapToLong(Long::parseLong).toArray();
    }
}
