package io.servegate.containers.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every trained model, served over real gRPC, classifies held-out Fashion-MNIST test images as
 * accurately as its trainer measured.
 */
class OnnxContainerAccuracyTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** The trainer's "first 2000" figure is over exactly these images, so it should match closely. */
    private static final int HELD_OUT = 2000;
    private static final int BATCH = 100;
    private static final double TOLERANCE = 0.01;

    /** cpu here; containers/onnx/gpu-check.sh runs this test with -Dservegate.onnx.device=cuda. */
    private static final Device DEVICE = Device.valueOf(
            System.getProperty("servegate.onnx.device", "cpu").toUpperCase(Locale.ROOT));

    static List<ModelTable.Entry> models() {
        return ModelTable.entries();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void servesTheModelAtItsMeasuredAccuracy(ModelTable.Entry model) throws Exception {
        FashionMnist data = FashionMnist.testSet();
        try (OnnxPredictor predictor = new OnnxPredictor(model.path(), DEVICE, 0, OutputMode.ARGMAX, 0);
                ModelContainer<float[], String> container = OnnxContainer.builder(predictor, TensorType.FLOATS)
                        .name(model.name()).host("127.0.0.1").port(0).build().start();
                ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {

            List<float[]> first32 = data.images().subList(0, 32);
            InferResult<String> small = client.infer(model.name(), "", TensorType.FLOATS, first32,
                    TensorType.STRINGS, TIMEOUT).get();
            assertThat(small.outputs()).hasSize(32)
                    .allSatisfy(label -> assertThat(Integer.parseInt(label)).isBetween(0, 9));
            assertThat(small.serviceTimeNanos()).isPositive();
            // Served and in-process predictions are the same model.
            assertThat(small.outputs()).isEqualTo(predictor.predictBatch(first32));

            int correct = 0;
            for (int from = 0; from < HELD_OUT; from += BATCH) {
                List<String> labels = client.infer(model.name(), "", TensorType.FLOATS,
                        data.images().subList(from, from + BATCH), TensorType.STRINGS, TIMEOUT).get().outputs();
                assertThat(labels).hasSize(BATCH);
                for (int i = 0; i < BATCH; i++) {
                    if (Integer.parseInt(labels.get(i)) == data.label(from + i)) {
                        correct++;
                    }
                }
            }
            double accuracy = correct / (double) HELD_OUT;
            System.out.printf(Locale.ROOT,
                    "ACCURACY %s (%s): served %.4f on test images 0..%d; table: first2000 %.4f, full test set %.4f%n",
                    model.name(), DEVICE, accuracy, HELD_OUT - 1, model.testAccuracyFirst2000(), model.testAccuracy());
            assertThat(accuracy).as("accuracy of %s on the first %d test images", model.name(), HELD_OUT)
                    .isCloseTo(model.testAccuracyFirst2000(), within(TOLERANCE));
        }
    }
}
