package io.servegate.containers.onnx;

import ai.onnxruntime.OnnxTensor;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;

/** The elements of a numeric output tensor, flat, read back for rendering one row at a time. */
final class Row {

    private final FloatBuffer floats;
    private final DoubleBuffer doubles;
    private final LongBuffer longs;
    private final IntBuffer ints;
    private final long size;

    private Row(FloatBuffer floats, DoubleBuffer doubles, LongBuffer longs, IntBuffer ints, long size) {
        this.floats = floats;
        this.doubles = doubles;
        this.longs = longs;
        this.ints = ints;
        this.size = size;
    }

    static Row of(OnnxTensor tensor) {
        long n = tensor.getInfo().getNumElements();
        return switch (tensor.getInfo().type) {
            case FLOAT -> new Row(tensor.getFloatBuffer(), null, null, null, n);
            case DOUBLE -> new Row(null, tensor.getDoubleBuffer(), null, null, n);
            case INT64 -> new Row(null, null, tensor.getLongBuffer(), null, n);
            case INT32 -> new Row(null, null, null, tensor.getIntBuffer(), n);
            default -> throw new IllegalStateException("output type " + tensor.getInfo().type
                    + " is not supported; expected float, double, int32 or int64");
        };
    }

    long size() {
        return size;
    }

    /** Index (relative to offset) of the largest of width elements; the first on ties, never a NaN. */
    int argmax(int offset, int width) {
        int best = 0;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < width; i++) {
            double x = value(offset + i);
            if (x > max) {
                max = x;
                best = i;
            }
        }
        return best;
    }

    /** width elements as a JSON array, each formatted like {@link #format}. */
    String json(int offset, int width) {
        StringBuilder sb = new StringBuilder(width * 12).append('[');
        for (int i = 0; i < width; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(format(offset + i));
        }
        return sb.append(']').toString();
    }

    /** One element in Java's shortest round-trip form (as the SDK renders numbers). */
    String format(int index) {
        if (floats != null) {
            return Float.toString(floats.get(index));
        }
        if (doubles != null) {
            return Double.toString(doubles.get(index));
        }
        return longs != null ? Long.toString(longs.get(index)) : Integer.toString(ints.get(index));
    }

    private double value(int index) {
        if (floats != null) {
            return floats.get(index);
        }
        if (doubles != null) {
            return doubles.get(index);
        }
        return longs != null ? longs.get(index) : ints.get(index);
    }
}
