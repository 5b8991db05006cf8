package io.servegate.oip.client;

import com.google.protobuf.ByteString;
import io.servegate.oip.InferTensorContents;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One of Clipper's five input types and its Open Inference Protocol encoding.
 *
 * <p>A batch of N numeric vectors of equal length d travels as one tensor of shape [N, d] in the
 * raw contents; strings and byte arrays travel as a BYTES tensor of shape [N], so their lengths
 * may differ within a batch. Decoding accepts the raw form and the typed {@code contents} form,
 * so requests from any OIP client are understood.
 *
 * @param <T> the Java type of one input: {@code int[]}, {@code float[]}, {@code double[]},
 *     {@code byte[]} or {@code String}
 */
public abstract sealed class TensorType<T> permits NumericTensorType, BytesTensorType {

    public static final TensorType<int[]> INTS = new NumericTensorType.Ints();
    public static final TensorType<float[]> FLOATS = new NumericTensorType.Floats();
    public static final TensorType<double[]> DOUBLES = new NumericTensorType.Doubles();
    public static final TensorType<byte[]> BYTES = new BytesTensorType.Bytes();
    public static final TensorType<String> STRINGS = new BytesTensorType.Strings();

    /** The OIP datatype of a batch of equal-sized byte arrays sent as one tensor [N, d1, ...]. */
    public static final String UINT8 = "UINT8";

    private static final Map<String, TensorType<?>> BY_NAME = Map.of(
            "ints", INTS, "floats", FLOATS, "doubles", DOUBLES, "bytes", BYTES, "strings", STRINGS);

    private final String clipperName;
    private final String datatype;

    TensorType(String clipperName, String datatype) {
        this.clipperName = clipperName;
        this.datatype = datatype;
    }

    /**
     * Looks a type up by its Clipper name ({@code ints, floats, doubles, bytes, strings}).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static TensorType<?> forName(String clipperName) {
        TensorType<?> type = clipperName == null ? null : BY_NAME.get(clipperName.toLowerCase(Locale.ROOT));
        if (type == null) {
            throw new IllegalArgumentException("unknown input type '" + clipperName
                    + "': expected one of ints, floats, doubles, bytes, strings");
        }
        return type;
    }

    /** Clipper's name of the type, as used by the admin API. */
    public String clipperName() {
        return clipperName;
    }

    /** The OIP datatype that carries it: INT32, FP32, FP64 or BYTES. */
    public String datatype() {
        return datatype;
    }

    /**
     * Whether a model that declares an input of {@code declared} takes this type's batches: its own
     * datatype, or for {@code bytes} also UINT8 (equal-sized byte arrays travel as one UINT8 tensor).
     */
    public boolean carriedBy(String declared) {
        return datatype.equals(declared) || this == BYTES && UINT8.equals(declared);
    }

    /** Whether values are fixed-width numeric vectors (carried as [N, d]). */
    public abstract boolean numeric();

    /** Number of elements of one value: the vector length, or 1 for strings and bytes. */
    public abstract int length(T value);

    /**
     * Encodes a non-empty batch.
     *
     * @throws TensorFormatException for an empty batch or numeric vectors of unequal length
     */
    public abstract EncodedTensor encode(List<T> batch);

    /**
     * Encodes a non-empty batch of byte arrays of one length L as a single UINT8 tensor [N, L], the
     * rows back to back with no length prefixes; null when the lengths differ or the type is not
     * {@code bytes}. Every {@code bytes} decoder here, in Java and in Python, accepts this form.
     */
    public EncodedTensor encodeFixedSize(List<T> batch) {
        return null;
    }

    /**
     * Decodes a tensor from its raw contents.
     *
     * @throws TensorFormatException when datatype, shape or byte count do not fit
     */
    public abstract List<T> decode(String datatype, List<Long> shape, ByteString raw);

    /**
     * Decodes a tensor from the typed contents field.
     *
     * @throws TensorFormatException when datatype, shape or element count do not fit
     */
    public abstract List<T> decode(String datatype, List<Long> shape, InferTensorContents contents);

    /**
     * Renders one value as text: strings as they are, bytes as UTF-8, a numeric vector of one
     * element as a number and longer ones as a JSON array.
     */
    public abstract String render(T value);

    @Override
    public String toString() {
        return clipperName;
    }

    void requireDatatype(String actual) {
        if (!datatype.equals(actual)) {
            throw new TensorFormatException("datatype " + actual + " does not match the model's input type '"
                    + clipperName + "', which is carried as " + datatype);
        }
    }

    static int batchSize(List<Long> shape) {
        if (shape.isEmpty() || shape.size() > 2) {
            throw new TensorFormatException("shape " + shape + " must be [N] or [N, d]");
        }
        long n = shape.get(0);
        if (n == 0) {
            throw new TensorFormatException("empty batch: shape " + shape + " has no rows");
        }
        if (n < 0 || n > Integer.MAX_VALUE) {
            throw new TensorFormatException("invalid batch dimension " + n + " in shape " + shape);
        }
        return (int) n;
    }

    static ByteBuffer littleEndian(ByteString raw) {
        return raw.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static String json(String[] elements) {
        return Arrays.toString(elements).replace(" ", "");
    }
}
