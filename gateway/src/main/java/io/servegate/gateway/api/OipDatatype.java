package io.servegate.gateway.api;

import io.servegate.oip.client.TensorType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The Open Inference Protocol's tensor datatypes, with the size of one element in binary form
 * (little-endian; BOOL one byte) and the range of the integer ones, so that a tensor of any of
 * them can be read and converted to a model's input type ({@link OipTensorRows}).
 */
enum OipDatatype {
    BOOL(1, 0, 1),
    UINT8(1, 0, 0xff),
    UINT16(2, 0, 0xffff),
    UINT32(4, 0, 0xffff_ffffL),
    // UINT64 values above Long.MAX_VALUE fit no model input type: they are refused where read
    UINT64(8, 0, Long.MAX_VALUE),
    INT8(1, Byte.MIN_VALUE, Byte.MAX_VALUE),
    INT16(2, Short.MIN_VALUE, Short.MAX_VALUE),
    INT32(4, Integer.MIN_VALUE, Integer.MAX_VALUE),
    INT64(8, Long.MIN_VALUE, Long.MAX_VALUE),
    FP16(2, 0, 0),
    FP32(4, 0, 0),
    FP64(8, 0, 0),
    BYTES(0, 0, 0);

    /** Every name, for error messages. */
    static final String NAMES = Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));

    private final int elementBytes;
    private final long min;
    private final long max;

    OipDatatype(int elementBytes, long min, long max) {
        this.elementBytes = elementBytes;
        this.min = min;
        this.max = max;
    }

    /** The datatype of that name, or null when the protocol has none. */
    static OipDatatype named(String name) {
        for (OipDatatype d : values()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }

    int elementBytes() {
        return elementBytes;
    }

    boolean floating() {
        return this == FP16 || this == FP32 || this == FP64;
    }

    /** BOOL and the integer types: their elements are read as {@code long}. */
    boolean integral() {
        return !floating() && this != BYTES;
    }

    long min() {
        return min;
    }

    long max() {
        return max;
    }

    /**
     * Whether a model of input type {@code type} takes tensors of this datatype: a numeric model
     * takes every numeric datatype and BOOL (each value converted where it keeps its value), a
     * {@code bytes} model BYTES, UINT8 and INT8 (one byte per element), a {@code strings} model BYTES.
     */
    boolean feeds(TensorType<?> type) {
        if (type.numeric()) {
            return this != BYTES;
        }
        return this == BYTES || type == TensorType.BYTES && (this == UINT8 || this == INT8);
    }

    /** The datatypes a model of input type {@code type} takes, for error messages. */
    static String takenBy(TensorType<?> type) {
        return Arrays.stream(values()).filter(d -> d.feeds(type)).map(Enum::name).collect(Collectors.joining(", "));
    }

    /** Reads the next element of an integral datatype from a little-endian buffer. */
    long readIntegral(ByteBuffer buf) {
        return switch (this) {
            case BOOL -> buf.get() != 0 ? 1 : 0;
            case UINT8 -> buf.get() & 0xff;
            case UINT16 -> buf.getShort() & 0xffff;
            case UINT32 -> buf.getInt() & 0xffff_ffffL;
            case UINT64, INT64 -> buf.getLong();
            case INT8 -> buf.get();
            case INT16 -> buf.getShort();
            case INT32 -> buf.getInt();
            default -> throw new IllegalStateException(this + " is not integral");
        };
    }

    /** Reads the next element of a floating-point datatype from a little-endian buffer. */
    double readFloating(ByteBuffer buf) {
        return switch (this) {
            case FP16 -> halfToFloat(buf.getShort());
            case FP32 -> buf.getFloat();
            case FP64 -> buf.getDouble();
            default -> throw new IllegalStateException(this + " is not floating-point");
        };
    }

    /** IEEE 754 binary16 to float (Java 17 has no {@code Float.float16ToFloat}). */
    static float halfToFloat(short half) {
        int sign = (half & 0x8000) << 16;
        int exponent = (half >>> 10) & 0x1f;
        int mantissa = half & 0x3ff;
        if (exponent == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f80_0000 | mantissa << 13);
        }
        if (exponent == 0) {
            // zero or subnormal: mantissa * 2^-24, exact in float
            float magnitude = mantissa * 0x1p-24f;
            return sign == 0 ? magnitude : -magnitude;
        }
        return Float.intBitsToFloat(sign | (exponent + 112) << 23 | mantissa << 13);
    }
}
