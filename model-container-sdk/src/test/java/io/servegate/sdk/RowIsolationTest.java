package io.servegate.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Row isolation over a real gRPC socket: a batch the predictor raises on answers with per-row errors. */
class RowIsolationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final AtomicInteger calls = new AtomicInteger();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    /** Sums each row; raises on the whole batch when any row holds a negative value, as a model might. */
    private List<float[]> sums(List<float[]> batch) throws InvalidInputException {
        calls.incrementAndGet();
        List<float[]> out = new ArrayList<>();
        for (float[] row : batch) {
            float sum = 0;
            for (float v : row) {
                if (v < 0) {
                    throw new InvalidInputException("negative value " + v);
                }
                sum += v;
            }
            out.add(new float[] {sum, row.length});
        }
        return out;
    }

    private <Y> ContainerClient start(ModelContainer.Builder<float[], Y> builder) throws Exception {
        ModelContainer<float[], Y> container = builder.name("sums").host("127.0.0.1").port(0)
                .warmupBatchSizes(List.of()).build().start();
        closeables.add(container);
        ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(0, client);
        return client;
    }

    private static List<float[]> batch(float... firsts) {
        List<float[]> batch = new ArrayList<>();
        for (float f : firsts) {
            batch.add(new float[] {f, 1});
        }
        return batch;
    }

    @Test
    void goodRowsKeepTheirOutputsAndBadRowsGetTheirOwnErrors() throws Exception {
        ContainerClient client = start(ModelContainer.builder(TensorType.FLOATS, TensorType.FLOATS, this::sums));
        InferResult<float[]> result = client.infer("sums", "", TensorType.FLOATS,
                batch(1, 2, -3, 4, 5, 6, -7, 8), TensorType.FLOATS, TIMEOUT).get(10, TimeUnit.SECONDS);

        assertThat(result.outputs()).hasSize(8);
        for (int i : new int[] {0, 1, 3, 4, 5, 7}) {
            assertThat(result.rowError(i)).isNull();
            assertThat(result.outputs().get(i)).containsExactly(i + 2f, 2f);
        }
        assertThat(result.rowError(2)).isEqualTo("negative value -3.0");
        assertThat(result.rowError(6)).isEqualTo("negative value -7.0");
        assertThat(result.outputs().get(2)).containsExactly(0f, 0f); // a placeholder of the others' shape
        // 1 + 2 halves + 4 quarters + 4 single rows: bisection, not one call per row
        assertThat(calls.get()).isEqualTo(11);
    }

    @Test
    void aBatchWithNoBadRowCarriesNoRowErrors() throws Exception {
        ContainerClient client = start(ModelContainer.builder(TensorType.FLOATS, TensorType.FLOATS, this::sums));
        InferResult<float[]> result = client.infer("sums", "", TensorType.FLOATS, batch(1, 2, 3),
                TensorType.FLOATS, TIMEOUT).get(10, TimeUnit.SECONDS);

        assertThat(result.rowErrors()).isEmpty();
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    void aSingleBadRowIsARowErrorNotAFailedCall() throws Exception {
        ContainerClient client = start(ModelContainer.builder(TensorType.FLOATS, TensorType.FLOATS, this::sums));
        InferResult<float[]> result = client.infer("sums", "", TensorType.FLOATS, batch(-1),
                TensorType.FLOATS, TIMEOUT).get(10, TimeUnit.SECONDS);

        assertThat(result.rowErrors()).containsExactly("negative value -1.0");
    }

    @Test
    void aPredictorThatFailsEveryRowFailsTheCall() throws Exception {
        ContainerClient client = start(ModelContainer.<float[], String>builder(TensorType.FLOATS,
                TensorType.STRINGS, batch -> {
                    throw new IllegalStateException("model not initialised");
                }));

        assertThatThrownBy(() -> client.inferAsText("sums", "", TensorType.FLOATS, batch(1, 2, 3), TIMEOUT)
                .get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .satisfies(e -> assertThat(Status.fromThrowable(e.getCause()).getCode()).isEqualTo(Status.Code.INTERNAL))
                .hasMessageContaining("model not initialised");
    }

    @Test
    void withoutIsolationTheBatchFailsAsInvalidArgument() throws Exception {
        ContainerClient client = start(ModelContainer.builder(TensorType.FLOATS, TensorType.FLOATS, this::sums)
                .isolateRows(false));

        assertThatThrownBy(() -> client.infer("sums", "", TensorType.FLOATS, batch(1, -2, 3), TensorType.FLOATS,
                TIMEOUT).get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(StatusRuntimeException.class)
                .satisfies(e -> assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
                .hasMessageContaining("negative value -2.0");
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    void textOutputsOfFailedRowsAreEmptyPlaceholders() throws Exception {
        ContainerClient client = start(ModelContainer.<float[], String>builder(TensorType.FLOATS, TensorType.STRINGS,
                batch -> sums(batch).stream().map(s -> Float.toString(s[0])).toList()));
        InferResult<String> result = client.inferAsText("sums", "", TensorType.FLOATS, batch(1, -2), TIMEOUT)
                .get(10, TimeUnit.SECONDS);

        assertThat(result.outputs()).containsExactly("2.0", "");
        assertThat(result.rowErrors()).containsExactly("", "negative value -2.0");
    }
}
