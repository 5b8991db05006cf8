package io.servegate.gateway.api;

import com.google.protobuf.ByteString;
import io.servegate.oip.InferTensorContents;
import io.servegate.oip.client.TensorType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * The rows of an OIP input tensor whose datatype is not the one that carries the model's input
 * type (an INT64 tensor for an {@code ints} model, FP64 for {@code floats}, UINT8 JSON numbers for
 * {@code bytes}), in JSON, binary or gRPC's typed contents, converted to the model's input type. A value is
 * converted only where it keeps its value: integers within the target's range (and, for FP32 and
 * FP64 models, exactly representable), floating-point values for an integer model only when
 * integral; floating-point values for FP32 models are rounded to the nearest float, as a JSON
 * decimal is. Every other value is a 400 naming it.
 */
final class OipTensorRows {

    private OipTensorRows() {
    }

    /**
     * The {@code rows} rows of {@code width} elements each of a raw tensor.
     *
     * @throws ApiException 400 when the byte count does not fit the shape or a value does not convert
     */
    static List<?> fromBinary(TensorType<?> type, OipDatatype datatype, int rows, int width, ByteString raw) {
        long expected = (long) rows * width * datatype.elementBytes();
        if (raw.size() != expected) {
            throw ApiException.badRequest("binary data of input: " + raw.size() + " bytes, but " + rows + " rows of "
                    + width + " " + datatype + " elements need " + expected);
        }
        ByteBuffer buf = raw.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        int count = rows * width;
        if (datatype.integral()) {
            long[] values = new long[count];
            for (int i = 0; i < count; i++) {
                values[i] = datatype.readIntegral(buf);
                if (datatype == OipDatatype.UINT64 && values[i] < 0) {
                    throw ApiException.badRequest("UINT64 element " + i + " (" + Long.toUnsignedString(values[i])
                            + ") does not fit the model's input type '" + type.clipperName() + "'");
                }
            }
            return rows(type, values, null, rows, width);
        }
        double[] values = new double[count];
        for (int i = 0; i < count; i++) {
            values[i] = datatype.readFloating(buf);
        }
        return rows(type, null, values, rows, width);
    }

    /**
     * The {@code rows} rows of {@code width} elements each of a tensor in gRPC's typed contents: the
     * field the protocol gives {@code datatype} (BOOL {@code bool_contents}, INT8 to INT32
     * {@code int_contents}, INT64 {@code int64_contents}, UINT8 to UINT32 {@code uint_contents},
     * UINT64 {@code uint64_contents}, FP32 and FP64 theirs; FP16 has none and comes raw).
     *
     * @throws ApiException 400 when that field does not hold {@code rows * width} values of the datatype, or one does not convert
     */
    static List<?> fromContents(TensorType<?> type, OipDatatype datatype, int rows, int width,
            InferTensorContents contents) {
        int count = rows * width;
        List<? extends Number> numbers = switch (datatype) {
            case INT8, INT16, INT32 -> contents.getIntContentsList();
            case INT64 -> contents.getInt64ContentsList();
            case UINT8, UINT16, UINT32 -> contents.getUintContentsList();
            case UINT64 -> contents.getUint64ContentsList();
            case FP32 -> contents.getFp32ContentsList();
            case FP64 -> contents.getFp64ContentsList();
            case BOOL -> null;
            default -> throw ApiException.badRequest(datatype + " tensors have no typed contents; send them in "
                    + "raw_input_contents");
        };
        int given = numbers == null ? contents.getBoolContentsCount() : numbers.size();
        if (given != count) {
            throw ApiException.badRequest("the contents for " + datatype + " hold " + given + " values but shape "
                    + "needs " + count);
        }
        if (datatype.floating()) {
            double[] values = new double[count];
            for (int i = 0; i < count; i++) {
                values[i] = numbers.get(i).doubleValue();
            }
            return rows(type, null, values, rows, width);
        }
        long[] values = new long[count];
        for (int i = 0; i < count; i++) {
            long v = numbers == null ? (contents.getBoolContents(i) ? 1 : 0)
                    : datatype == OipDatatype.UINT8 || datatype == OipDatatype.UINT16 || datatype == OipDatatype.UINT32
                    ? numbers.get(i).intValue() & 0xffff_ffffL : numbers.get(i).longValue();
            if (v < datatype.min() || v > datatype.max()) {
                throw ApiException.badRequest(datatype + " element " + i + " (" + (datatype == OipDatatype.UINT64
                        ? Long.toUnsignedString(v) : Long.toString(v)) + ") is beyond " + datatype + "'s range");
            }
            values[i] = v;
        }
        return rows(type, values, null, rows, width);
    }

    /**
     * The rows of a tensor given as JSON {@code data}, already flattened in row-major order and
     * checked to hold {@code rows * width} elements.
     *
     * @throws ApiException 400 for an element that is not a value of {@code datatype}, or does not convert
     */
    static List<?> fromJson(TensorType<?> type, OipDatatype datatype, int rows, int width, List<JsonNode> flat) {
        int count = rows * width;
        if (datatype.integral()) {
            long[] values = new long[count];
            for (int i = 0; i < count; i++) {
                values[i] = integral(datatype, flat.get(i), i);
            }
            return rows(type, values, null, rows, width);
        }
        double[] values = new double[count];
        for (int i = 0; i < count; i++) {
            values[i] = floating(datatype, flat.get(i), i);
        }
        return rows(type, null, values, rows, width);
    }

    private static long integral(OipDatatype datatype, JsonNode e, int i) {
        if (datatype == OipDatatype.BOOL) {
            if (!e.isBoolean()) {
                throw ApiException.badRequest("'data' element " + i + " must be true or false for BOOL");
            }
            return e.booleanValue() ? 1 : 0;
        }
        if (!e.isIntegralNumber() || !e.canConvertToLong() || e.longValue() < datatype.min()
                || e.longValue() > datatype.max()) {
            throw ApiException.badRequest("'data' element " + i + " must be an integer in " + datatype + "'s range ["
                    + datatype.min() + ", " + datatype.max() + "]");
        }
        return e.longValue();
    }

    private static double floating(OipDatatype datatype, JsonNode e, int i) {
        if (!e.isNumber()) {
            throw ApiException.badRequest("'data' element " + i + " must be a number for " + datatype);
        }
        double d = JsonBodies.toDouble(e);
        double limit = datatype == OipDatatype.FP16 ? 65504 : datatype == OipDatatype.FP32 ? Float.MAX_VALUE
                : Double.MAX_VALUE;
        if (!Double.isFinite(d) || Math.abs(d) > limit) {
            throw ApiException.badRequest("'data' element " + i + " is beyond " + datatype + "'s range");
        }
        return d;
    }

    /** Exactly one of {@code integral} and {@code floating} holds the elements. */
    private static List<?> rows(TensorType<?> type, long[] integral, double[] floating, int rows, int width) {
        List<Object> out = new ArrayList<>(rows);
        for (int r = 0; r < rows; r++) {
            int from = r * width;
            out.add(switch (type.clipperName()) {
                case "ints" -> {
                    int[] v = new int[width];
                    for (int j = 0; j < width; j++) {
                        v[j] = integral != null ? toInt(integral[from + j], from + j)
                                : toInt(floating[from + j], from + j);
                    }
                    yield v;
                }
                case "floats" -> {
                    float[] v = new float[width];
                    for (int j = 0; j < width; j++) {
                        v[j] = integral != null ? toFloat(integral[from + j], from + j) : (float) floating[from + j];
                        if (Float.isInfinite(v[j])) {
                            throw doesNotFit(Double.toString(floating[from + j]), from + j, TensorType.FLOATS);
                        }
                    }
                    yield v;
                }
                case "doubles" -> {
                    double[] v = new double[width];
                    for (int j = 0; j < width; j++) {
                        v[j] = integral != null ? toDouble(integral[from + j], from + j) : floating[from + j];
                    }
                    yield v;
                }
                case "bytes" -> {
                    // UINT8 or INT8 (feeds): one byte per element, INT8 as its two's complement
                    byte[] v = new byte[width];
                    for (int j = 0; j < width; j++) {
                        v[j] = (byte) integral[from + j];
                    }
                    yield v;
                }
                default -> throw new IllegalStateException("no conversion to " + type);
            });
        }
        return out;
    }

    private static int toInt(long v, int i) {
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw doesNotFit(Long.toString(v), i, TensorType.INTS);
        }
        return (int) v;
    }

    private static int toInt(double d, int i) {
        if (d != Math.rint(d) || d < Integer.MIN_VALUE || d > Integer.MAX_VALUE) {
            throw doesNotFit(Double.toString(d), i, TensorType.INTS);
        }
        return (int) d;
    }

    private static float toFloat(long v, int i) {
        float f = v;
        // 2^63 saturates back to Long.MAX_VALUE when cast: compare below it
        if (f >= 0x1p63f || (long) f != v) {
            throw doesNotFit(Long.toString(v), i, TensorType.FLOATS);
        }
        return f;
    }

    private static double toDouble(long v, int i) {
        double d = v;
        if (d >= 0x1p63 || (long) d != v) {
            throw doesNotFit(Long.toString(v), i, TensorType.DOUBLES);
        }
        return d;
    }

    private static ApiException doesNotFit(String value, int i, TensorType<?> type) {
        return ApiException.badRequest("element " + i + " (" + value + ") does not fit the model's input type '"
                + type.clipperName() + "' (" + type.datatype() + ") exactly");
    }
}
