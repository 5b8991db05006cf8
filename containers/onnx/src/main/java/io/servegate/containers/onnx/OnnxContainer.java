package io.servegate.containers.onnx;

import io.servegate.sdk.ContainerOptions;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.TensorType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Serves any ONNX model with ONNX Runtime (see {@link OnnxPredictor} for the interface a model
 * must have). Inputs are numeric vectors of the model's input length; requests whose vectors have
 * another length are rejected with INVALID_ARGUMENT before they reach the model.
 */
@Command(name = "onnx-container", description = "Serves an ONNX model with ONNX Runtime.")
public final class OnnxContainer implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ContainerOptions options;


    @Option(names = "--model", defaultValue = "${env:MODEL_PATH}", required = true,
            description = "Path of the .onnx file (env MODEL_PATH).")
    Path model;

    @Option(names = "--device", defaultValue = "${env:DEVICE:-cpu}",
            description = "cpu or cuda; cuda needs the onnxruntime_gpu build (env DEVICE, default ${DEFAULT-VALUE}).")
    String device;

    @Option(names = "--device-id", defaultValue = "${env:DEVICE_ID:-0}",
            description = "CUDA device ordinal (env DEVICE_ID, default ${DEFAULT-VALUE}).")
    int deviceId;

    @Option(names = "--output", defaultValue = "${env:OUTPUT:-argmax}",
            description = "argmax: the index of the largest output element per input; raw: the output row "
                    + "as a JSON array (env OUTPUT, default ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--intra-op-threads", defaultValue = "${env:INTRA_OP_THREADS:-0}",
            description = "ONNX Runtime intra-op threads, 0 for its default (env INTRA_OP_THREADS, "
                    + "default ${DEFAULT-VALUE}).")
    int intraOpThreads;

    @Option(names = "--input-type", defaultValue = "${env:INPUT_TYPE:-floats}",
            description = "Clipper input type: floats, doubles or ints; doubles and ints are converted to float32 "
                    + "(env INPUT_TYPE, default ${DEFAULT-VALUE}).")
    String inputType;

    public static void main(String[] args) {
        System.exit(new CommandLine(new OnnxContainer()).execute(args));
    }

    /**
     * A (not yet built) container serving {@code predictor} for inputs of {@code inputType}, with
     * the input length fixed to the model's so that wrong lengths get INVALID_ARGUMENT. Callers
     * set name, host and port.
     */
    public static <X> ModelContainer.Builder<X, String> builder(OnnxPredictor predictor, TensorType<X> inputType) {
        return ModelContainer.builder(inputType, TensorType.STRINGS, predictor.forInputType(inputType))
                .inputLength(predictor.inputLength());
    }

    @Override
    public Integer call() throws Exception {
        TensorType<?> type;
        Device dev;
        OutputMode mode;
        try {
            type = TensorType.forName(inputType);
            if (!type.numeric()) {
                throw new IllegalArgumentException("--input-type must be floats, doubles or ints for an ONNX model, got "
                        + inputType);
            }
            dev = parse(Device.class, "--device", device);
            mode = parse(OutputMode.class, "--output", output);
            if (!Files.isRegularFile(model)) {
                throw new IllegalArgumentException("--model " + model + " is not a file");
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        try (OnnxPredictor predictor = new OnnxPredictor(model, dev, deviceId, mode, intraOpThreads)) {
            options.applyTo(builder(predictor, type)).build().runUntilShutdown();
        }
        return 0;
    }

    private static <E extends Enum<E>> E parse(Class<E> type, String option, String value) {
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " must be one of "
                    + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT) + ", got '"
                    + value + "'");
        }
    }
}
