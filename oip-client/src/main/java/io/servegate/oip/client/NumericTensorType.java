package io.servegate.oip.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.servegate.oip.InferTensorContents;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** Fixed-width numeric vectors, carried as one [N, d] tensor. */
abstract sealed class NumericTensorType<T> extends TensorType<T>
        permits NumericTensorType.Ints, NumericTensorType.Floats, NumericTensorType.Doubles {

    private final int elementBytes;

    NumericTensorType(String clipperName, String datatype, int elementBytes) {
        super(clipperName, datatype);
        this.elementBytes = elementBytes;
    }

    @Override
    public boolean numeric() {
        return true;
    }

    /** Writes value into buf. */
    abstract void put(ByteBuffer buf, T value);

    /** Reads one vector of d elements from buf. */
    abstract T get(ByteBuffer buf, int d);

    /** Number of elements of this type in the typed contents. */
    abstract int contentCount(InferTensorContents contents);

    /** Vector i of d elements from the typed contents. */
    abstract T fromContents(InferTensorContents contents, int offset, int d);

    @Override
    public EncodedTensor encode(List<T> batch) {
        if (batch.isEmpty()) {
            throw new TensorFormatException("empty batch");
        }
        int d = length(batch.get(0));
        ByteBuffer buf = ByteBuffer.allocate(Math.multiplyExact(batch.size(), d * elementBytes))
                .order(ByteOrder.LITTLE_ENDIAN);
        for (T value : batch) {
            if (length(value) != d) {
                throw new TensorFormatException("vectors in one batch must have equal length: got "
                        + length(value) + " and " + d);
            }
            put(buf, value);
        }
        // the buffer is this method's own: wrapped, not copied
        return new EncodedTensor(datatype(), List.of((long) batch.size(), (long) d),
                UnsafeByteOperations.unsafeWrap(buf.array()));
    }

    @Override
    public List<T> decode(String datatype, List<Long> shape, ByteString raw) {
        requireDatatype(datatype);
        int n = batchSize(shape);
        int d = width(shape);
        long expected = (long) n * d * elementBytes;
        if (raw.size() != expected) {
            throw new TensorFormatException("raw contents hold " + raw.size() + " bytes but shape " + shape
                    + " of " + datatype + " needs " + expected);
        }
        ByteBuffer buf = littleEndian(raw);
        List<T> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(get(buf, d));
        }
        return out;
    }

    @Override
    public List<T> decode(String datatype, List<Long> shape, InferTensorContents contents) {
        requireDatatype(datatype);
        int n = batchSize(shape);
        int d = width(shape);
        int count = contentCount(contents);
        if (count != (long) n * d) {
            throw new TensorFormatException("contents hold " + count + " elements but shape " + shape
                    + " needs " + (long) n * d);
        }
        List<T> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(fromContents(contents, i * d, d));
        }
        return out;
    }

    private static int width(List<Long> shape) {
        long d = shape.size() == 2 ? shape.get(1) : 1;
        if (d <= 0 || d > Integer.MAX_VALUE) {
            throw new TensorFormatException("invalid vector dimension " + d + " in shape " + shape);
        }
        return (int) d;
    }

    static final class Ints extends NumericTensorType<int[]> {
        Ints() {
            super("ints", "INT32", Integer.BYTES);
        }

        @Override
        public int length(int[] value) {
            return value.length;
        }

        @Override
        void put(ByteBuffer buf, int[] value) {
            buf.asIntBuffer().put(value);
            buf.position(buf.position() + value.length * Integer.BYTES);
        }

        @Override
        int[] get(ByteBuffer buf, int d) {
            int[] v = new int[d];
            buf.asIntBuffer().get(v);
            buf.position(buf.position() + d * Integer.BYTES);
            return v;
        }

        @Override
        int contentCount(InferTensorContents contents) {
            return contents.getIntContentsCount();
        }

        @Override
        int[] fromContents(InferTensorContents contents, int offset, int d) {
            int[] v = new int[d];
            for (int j = 0; j < d; j++) {
                v[j] = contents.getIntContents(offset + j);
            }
            return v;
        }

        @Override
        public String render(int[] value) {
            if (value.length == 1) {
                return Integer.toString(value[0]);
            }
            String[] parts = new String[value.length];
            for (int i = 0; i < value.length; i++) {
                parts[i] = Integer.toString(value[i]);
            }
            return json(parts);
        }
    }

    static final class Floats extends NumericTensorType<float[]> {
        Floats() {
            super("floats", "FP32", Float.BYTES);
        }

        @Override
        public int length(float[] value) {
            return value.length;
        }

        @Override
        void put(ByteBuffer buf, float[] value) {
            buf.asFloatBuffer().put(value);
            buf.position(buf.position() + value.length * Float.BYTES);
        }

        @Override
        float[] get(ByteBuffer buf, int d) {
            float[] v = new float[d];
            buf.asFloatBuffer().get(v);
            buf.position(buf.position() + d * Float.BYTES);
            return v;
        }

        @Override
        int contentCount(InferTensorContents contents) {
            return contents.getFp32ContentsCount();
        }

        @Override
        float[] fromContents(InferTensorContents contents, int offset, int d) {
            float[] v = new float[d];
            for (int j = 0; j < d; j++) {
                v[j] = contents.getFp32Contents(offset + j);
            }
            return v;
        }

        @Override
        public String render(float[] value) {
            if (value.length == 1) {
                return Float.toString(value[0]);
            }
            String[] parts = new String[value.length];
            for (int i = 0; i < value.length; i++) {
                parts[i] = Float.toString(value[i]);
            }
            return json(parts);
        }
    }

    static final class Doubles extends NumericTensorType<double[]> {
        Doubles() {
            super("doubles", "FP64", Double.BYTES);
        }

        @Override
        public int length(double[] value) {
            return value.length;
        }

        @Override
        void put(ByteBuffer buf, double[] value) {
            buf.asDoubleBuffer().put(value);
            buf.position(buf.position() + value.length * Double.BYTES);
        }

        @Override
        double[] get(ByteBuffer buf, int d) {
            double[] v = new double[d];
            buf.asDoubleBuffer().get(v);
            buf.position(buf.position() + d * Double.BYTES);
            return v;
        }

        @Override
        int contentCount(InferTensorContents contents) {
            return contents.getFp64ContentsCount();
        }

        @Override
        double[] fromContents(InferTensorContents contents, int offset, int d) {
            double[] v = new double[d];
            for (int j = 0; j < d; j++) {
                v[j] = contents.getFp64Contents(offset + j);
            }
            return v;
        }

        @Override
        public String render(double[] value) {
            if (value.length == 1) {
                return Double.toString(value[0]);
            }
            String[] parts = new String[value.length];
            for (int i = 0; i < value.length; i++) {
                parts[i] = Double.toString(value[i]);
            }
            return json(parts);
        }
    }
}
