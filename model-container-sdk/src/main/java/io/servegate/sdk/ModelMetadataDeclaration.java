package io.servegate.sdk;

import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.TensorType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a container's ModelMetadata answers declare: its input's datatype and shape (from which the
 * gateway checks every query before it is batched) and the parameters reported beside them (the
 * warm-up's report, the maximum batch size).
 */
final class ModelMetadataDeclaration {

    private final TensorType<?> inputType;
    private final TensorType<?> outputType;
    private volatile Map<String, InferParameter> parameters = Map.of();
    /** One input's dimensions after the batch dimension, when declared; empty when not. */
    private volatile List<Long> inputDims = List.of();

    ModelMetadataDeclaration(TensorType<?> inputType, TensorType<?> outputType) {
        this.inputType = inputType;
        this.outputType = outputType;
    }

    /**
     * Declares the dimensions of one input (after the batch dimension), for a container of one
     * predictor; a {@code bytes} input is then declared as UINT8 of that shape.
     */
    void declareInputDims(List<Long> dims) {
        inputDims = List.copyOf(dims);
    }

    /** Adds {@code added} to every answer. */
    void report(Map<String, InferParameter> added) {
        Map<String, InferParameter> all = new LinkedHashMap<>(parameters);
        all.putAll(added);
        parameters = Map.copyOf(all);
    }

    /** The answer for one model version; an input length not known yet ({@code -1}) is reported as -1. */
    ModelMetadataResponse answer(String name, String version, String platform, String outputName, int inputLength) {
        return ModelMetadataResponse.newBuilder()
                .setName(name)
                .addVersions(version)
                .setPlatform(platform)
                .addInputs(inputMetadata(inputLength))
                .addOutputs(tensorMetadata(outputName, outputType, -1))
                .putAllParameters(parameters)
                .build();
    }

    /**
     * The input as declared: of the declared dimensions, else numeric {@code [-1, length]}; a
     * {@code bytes} input of a known length is UINT8, as the gateway sends equal-sized byte arrays.
     */
    private ModelMetadataResponse.TensorMetadata inputMetadata(int inputLength) {
        boolean fixedBytes = inputType == TensorType.BYTES && inputLength > 0;
        if (inputDims.isEmpty() && !fixedBytes) {
            return tensorMetadata("input", inputType, inputLength);
        }
        return ModelMetadataResponse.TensorMetadata.newBuilder().setName("input")
                .setDatatype(fixedBytes ? TensorType.UINT8 : inputType.datatype()).addShape(-1)
                .addAllShape(inputDims.isEmpty() ? List.of((long) inputLength) : inputDims).build();
    }

    private static ModelMetadataResponse.TensorMetadata tensorMetadata(String tensorName, TensorType<?> type,
            int length) {
        ModelMetadataResponse.TensorMetadata.Builder b = ModelMetadataResponse.TensorMetadata.newBuilder()
                .setName(tensorName).setDatatype(type.datatype()).addShape(-1);
        if (type.numeric()) {
            b.addShape(length > 0 ? length : -1);
        }
        return b.build();
    }
}
