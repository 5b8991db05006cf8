package io.servegate.oip.client;

import io.servegate.oip.ModelInferResponse;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-row errors in an OIP ModelInferResponse: a container whose model failed some rows of a
 * batch (and predicted the others) answers the call anyway and names the failed rows in one more
 * output tensor, {@value #OUTPUT}: BYTES, shape [N], one element per row, empty for a predicted
 * row and the error's message (UTF-8) for a failed one. It is carried like the response's other
 * outputs (in {@code raw_output_contents} at its own index when the response uses raw contents,
 * else in {@code contents.bytes_contents}). A failed row's place in the model's own outputs holds
 * a placeholder (an empty string, zeros) that a client must not use. A response without the
 * tensor predicted every row. Any OIP server can adopt the convention; clients that read outputs
 * by name ignore it.
 */
public final class RowErrors {

    /** The name of the output tensor that carries per-row errors. */
    public static final String OUTPUT = "servegate_row_errors";

    private RowErrors() {
    }

    /**
     * The per-row messages of {@code response} ({@code ""} for a predicted row), or an empty
     * list when it carries none.
     *
     * @throws TensorFormatException when the tensor is malformed
     */
    public static List<String> of(ModelInferResponse response) {
        int index = index(response);
        if (index < 0) {
            return List.of();
        }
        ModelInferResponse.InferOutputTensor tensor = response.getOutputs(index);
        if (!"BYTES".equals(tensor.getDatatype())) {
            throw new TensorFormatException("output '" + OUTPUT + "' must be BYTES, got " + tensor.getDatatype());
        }
        return response.getRawOutputContentsCount() > index
                ? TensorType.STRINGS.decode(tensor.getDatatype(), tensor.getShapeList(),
                        response.getRawOutputContents(index))
                : TensorType.STRINGS.decode(tensor.getDatatype(), tensor.getShapeList(), tensor.getContents());
    }

    /**
     * Appends {@code errors} (one per row, {@code ""} for a predicted row) as the last output of
     * {@code response}, whose other outputs are in {@code raw_output_contents}.
     */
    public static ModelInferResponse.Builder appendRaw(ModelInferResponse.Builder response, List<String> errors) {
        EncodedTensor encoded = TensorType.STRINGS.encode(new ArrayList<>(errors));
        return response
                .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder()
                        .setName(OUTPUT)
                        .setDatatype(encoded.datatype())
                        .addAllShape(encoded.shape()))
                .addRawOutputContents(encoded.raw());
    }

    /** The index of the row-errors tensor among the response's outputs, or -1. */
    static int index(ModelInferResponse response) {
        for (int i = 0; i < response.getOutputsCount(); i++) {
            if (OUTPUT.equals(response.getOutputs(i).getName())) {
                return i;
            }
        }
        return -1;
    }
}
