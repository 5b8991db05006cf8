package io.servegate.containers.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtProvider;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.Predictor;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class OnnxPredictorTest {

    private static final Path MODEL = ModelTable.named("fmnist-logreg").path();

    @Test
    void readsTheModelInterface() throws Exception {
        try (OnnxPredictor p = new OnnxPredictor(MODEL)) {
            assertThat(p.inputName()).isEqualTo("input");
            assertThat(p.outputName()).isEqualTo("logits");
            assertThat(p.inputLength()).isEqualTo(FashionMnist.PIXELS);
        }
    }

    @Test
    void rawOutputIsTheLogitRowWhoseArgmaxIsTheLabel() throws Exception {
        List<float[]> batch = FashionMnist.testSet().images().subList(0, 16);
        try (OnnxPredictor argmax = new OnnxPredictor(MODEL);
                OnnxPredictor raw = new OnnxPredictor(MODEL, Device.CPU, 0, OutputMode.RAW, 1)) {
            List<String> labels = argmax.predictBatch(batch);
            List<String> rows = raw.predictBatch(batch);
            assertThat(rows).hasSize(16);
            for (int i = 0; i < rows.size(); i++) {
                String row = rows.get(i);
                assertThat(row).startsWith("[").endsWith("]");
                double[] logits = Arrays.stream(row.substring(1, row.length() - 1).split(","))
                        .mapToDouble(Double::parseDouble).toArray();
                assertThat(logits).hasSize(10);
                int best = 0;
                for (int c = 1; c < logits.length; c++) {
                    if (logits[c] > logits[best]) {
                        best = c;
                    }
                }
                assertThat(Integer.toString(best)).isEqualTo(labels.get(i));
            }
        }
    }

    @Test
    void doublesAreConvertedToTheModelsFloats() throws Exception {
        List<float[]> floats = FashionMnist.testSet().images().subList(0, 8);
        List<double[]> doubles = new ArrayList<>();
        for (float[] f : floats) {
            double[] d = new double[f.length];
            for (int i = 0; i < f.length; i++) {
                d[i] = f[i];
            }
            doubles.add(d);
        }
        try (OnnxPredictor p = new OnnxPredictor(MODEL)) {
            Predictor<double[], String> asDoubles = p.forInputType(TensorType.DOUBLES);
            assertThat(asDoubles.predictBatch(doubles)).isEqualTo(p.predictBatch(floats));
            assertThat(p.forInputType(TensorType.INTS).predictBatch(List.of(new int[FashionMnist.PIXELS])))
                    .isEqualTo(p.predictBatch(List.of(new float[FashionMnist.PIXELS])));
            assertThatThrownBy(() -> p.forInputType(TensorType.STRINGS)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> p.predictBatch(List.of(new float[3])))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("784");
        }
    }

    @Test
    void cudaOnACpuBuildFailsClearly() {
        assumeFalse(OrtEnvironment.getAvailableProviders().contains(OrtProvider.CUDA), "this build has CUDA");
        assertThatThrownBy(() -> new OnnxPredictor(MODEL, Device.CUDA, 0, OutputMode.ARGMAX, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("onnxruntime_gpu");
    }

    @Test
    void commandRejectsBadOptionsAsUsageErrors() {
        assertThat(runCommand("--name", "m", "--model", "no/such/file.onnx")).contains("is not a file");
        assertThat(runCommand("--model", MODEL.toString())).contains("--model needs a model name");
        assertThat(runCommand("--model", MODEL.toString(), "--model-dir", ".")).contains("exactly one of --model");
        assertThat(runCommand("--models", MODEL + ",no/such/file.onnx")).contains("no/such/file.onnx is not a file");
        assertThat(runCommand("--model-dir", MODEL.toString())).contains("is not a directory");
        assertThat(runCommand("--name", "m", "--model", MODEL.toString(), "--input-type", "strings"))
                .contains("floats, doubles or ints");
        assertThat(runCommand("--name", "m", "--model", MODEL.toString(), "--device", "tpu"))
                .contains("--device must be one of [cpu, cuda]");
        assertThat(runCommand("--name", "m", "--model", MODEL.toString(), "--output", "probabilities"))
                .contains("--output must be one of [argmax, raw]");
    }

    /** Runs the command, expecting a usage error; returns what it printed on stderr. */
    private static String runCommand(String... args) {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new OnnxContainer()).setErr(new PrintWriter(err)).execute(args);
        assertThat(code).as("exit code; stderr: %s", err).isEqualTo(CommandLine.ExitCode.USAGE);
        return err.toString();
    }
}
