package io.servegate.gateway.dispatch;

import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.TensorType;
import java.util.ArrayList;
import java.util.List;

/**
 * The one input tensor a model version's containers declare in their OIP ModelMetadata, so that
 * the gateway refuses an input no container would take before it joins (and spoils) a batch.
 * Merged across replicas by {@link #merge}: what they disagree on is unknown, and nothing is
 * refused for it.
 *
 * @param name      the tensor's name, or null when unknown
 * @param datatype  its OIP datatype (e.g. {@code UINT8}, {@code FP32}), or null when unknown
 * @param dims      its dimensions after the batch dimension, -1 for any size; null when the rank is unknown
 * @param rowLength the values one input has (bytes for a {@code bytes} input sent as UINT8), or -1 when any
 */
public record DeclaredInput(String name, String datatype, List<Long> dims, int rowLength) {

    /** The metadata parameter in which a container may declare a {@code bytes} input's length. */
    static final String INPUT_BYTES = "servegate_input_bytes";

    /** Nothing declared: every check passes. */
    public static final DeclaredInput UNKNOWN = new DeclaredInput(null, null, null, -1);

    /**
     * What {@code md} declares for a model registered with input type {@code type}; {@link #UNKNOWN}
     * unless it declares exactly one input with a batch dimension.
     */
    static DeclaredInput of(ModelMetadataResponse md, TensorType<?> type) {
        if (md.getInputsCount() != 1 || md.getInputs(0).getShapeCount() < 1) {
            return UNKNOWN;
        }
        ModelMetadataResponse.TensorMetadata t = md.getInputs(0);
        List<Long> dims = List.copyOf(t.getShapeList().subList(1, t.getShapeCount()));
        long values = 1;
        for (long d : dims) {
            values = d > 0 ? values * d : -1;
            if (values < 0 || values > Integer.MAX_VALUE) {
                values = -1;
                break;
            }
        }
        // a bytes input's length counts bytes: only a one-byte datatype's shape says how many
        boolean counted = type.numeric() || type == TensorType.BYTES && TensorType.UINT8.equals(t.getDatatype());
        int rowLength = counted && !dims.isEmpty() ? (int) values : -1;
        if (rowLength < 0 && type == TensorType.BYTES) {
            rowLength = declaredBytes(md);
        }
        return new DeclaredInput(t.getName(), t.getDatatype(), dims, rowLength);
    }

    /**
     * A {@code bytes} input's length as the parameter {@value #INPUT_BYTES} declares it (the Python
     * SDK declares such an input as BYTES and its length there), or -1.
     */
    private static int declaredBytes(ModelMetadataResponse md) {
        InferParameter p = md.getParametersMap().get(INPUT_BYTES);
        long bytes = p == null ? -1 : p.getInt64Param();
        return bytes > 0 && bytes <= Integer.MAX_VALUE ? (int) bytes : -1;
    }

    /** What this and {@code other} agree on; a null {@code other} (a replica that declared nothing yet) changes nothing. */
    DeclaredInput merge(DeclaredInput other) {
        if (other == null || other.equals(this) || other == UNKNOWN) {
            return this;
        }
        if (this == UNKNOWN) {
            return other;
        }
        List<Long> merged = null;
        if (dims != null && other.dims != null && dims.size() == other.dims.size()) {
            merged = new ArrayList<>(dims.size());
            for (int i = 0; i < dims.size(); i++) {
                merged.add(dims.get(i).equals(other.dims.get(i)) ? dims.get(i) : -1L);
            }
        }
        return new DeclaredInput(same(name, other.name), same(datatype, other.datatype),
                merged == null ? null : List.copyOf(merged), rowLength == other.rowLength ? rowLength : -1);
    }

    private static String same(String a, String b) {
        return a != null && a.equals(b) ? a : null;
    }

    /** Whether the containers declared a datatype and a rank. */
    public boolean known() {
        return datatype != null && dims != null;
    }

    /** The declared shape with its batch dimension first ({@code -1}), as OIP metadata gives it. */
    public List<Long> shape() {
        List<Long> shape = new ArrayList<>(dims.size() + 1);
        shape.add(-1L);
        shape.addAll(dims);
        return shape;
    }

    /**
     * What is wrong with a request tensor of {@code datatype} and {@code shape} (its batch
     * dimension first); null when it fits, when the containers declare no size, or when the
     * tensor is of another datatype than the declared one (then each row is checked by its
     * length alone).
     */
    public String shapeProblem(String requestDatatype, List<Long> requestShape) {
        if (!known() || !datatype.equals(requestDatatype) || dims.stream().noneMatch(d -> d > 0)) {
            return null; // no size declared (e.g. [-1, -1]): the rank alone is no reason to refuse
        }
        boolean fits = requestShape.size() == dims.size() + 1;
        for (int i = 0; fits && i < dims.size(); i++) {
            fits = dims.get(i) < 0 || dims.get(i).equals(requestShape.get(i + 1));
        }
        return fits ? null : "shape " + requestShape + " does not match the shape " + shape()
                + " the model's containers declare for " + datatype + " input '" + name + "'";
    }
}
