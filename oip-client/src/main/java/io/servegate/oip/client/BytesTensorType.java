package io.servegate.oip.client;

import com.google.protobuf.ByteString;
import io.servegate.oip.InferTensorContents;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** Variable-length elements (strings or byte arrays), carried as one BYTES tensor of shape [N]. */
abstract sealed class BytesTensorType<T> extends TensorType<T>
        permits BytesTensorType.Bytes, BytesTensorType.Strings {

    BytesTensorType(String clipperName) {
        super(clipperName, "BYTES");
    }

    abstract byte[] toBytes(T value);

    abstract T fromBytes(byte[] bytes);

    @Override
    public boolean numeric() {
        return false;
    }

    @Override
    public int length(T value) {
        return 1;
    }

    @Override
    public EncodedTensor encode(List<T> batch) {
        if (batch.isEmpty()) {
            throw new TensorFormatException("empty batch");
        }
        List<byte[]> elements = new ArrayList<>(batch.size());
        int total = 0;
        for (T value : batch) {
            byte[] b = toBytes(value);
            elements.add(b);
            total = Math.addExact(total, Integer.BYTES + b.length);
        }
        ByteBuffer buf = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        for (byte[] b : elements) {
            buf.putInt(b.length).put(b);
        }
        buf.flip();
        return new EncodedTensor(datatype(), List.of((long) batch.size()), ByteString.copyFrom(buf));
    }

    @Override
    public List<T> decode(String datatype, List<Long> shape, ByteString raw) {
        requireDatatype(datatype);
        int n = elementCount(shape);
        ByteBuffer buf = littleEndian(raw);
        List<T> out = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                int len = buf.getInt();
                if (len < 0 || len > buf.remaining()) {
                    throw new TensorFormatException("BYTES element " + i + " declares length "
                            + Integer.toUnsignedString(len) + " but only " + buf.remaining() + " bytes remain");
                }
                byte[] b = new byte[len];
                buf.get(b);
                out.add(fromBytes(b));
            }
        } catch (BufferUnderflowException e) {
            throw new TensorFormatException("raw BYTES contents end before element " + out.size() + " of " + n);
        }
        if (buf.hasRemaining()) {
            throw new TensorFormatException("raw BYTES contents hold " + buf.remaining()
                    + " bytes beyond the " + n + " elements of shape " + shape);
        }
        return out;
    }

    @Override
    public List<T> decode(String datatype, List<Long> shape, InferTensorContents contents) {
        requireDatatype(datatype);
        int n = elementCount(shape);
        if (contents.getBytesContentsCount() != n) {
            throw new TensorFormatException("contents hold " + contents.getBytesContentsCount()
                    + " elements but shape " + shape + " needs " + n);
        }
        List<T> out = new ArrayList<>(n);
        for (ByteString b : contents.getBytesContentsList()) {
            out.add(fromBytes(b.toByteArray()));
        }
        return out;
    }

    /** BYTES batches are [N] or [N, 1]: one element per input. */
    private static int elementCount(List<Long> shape) {
        int n = batchSize(shape);
        if (shape.size() == 2 && shape.get(1) != 1) {
            throw new TensorFormatException("BYTES input shape " + shape + " must be [N] or [N, 1]");
        }
        return n;
    }

    static final class Bytes extends BytesTensorType<byte[]> {
        Bytes() {
            super("bytes");
        }

        @Override
        byte[] toBytes(byte[] value) {
            return value;
        }

        @Override
        byte[] fromBytes(byte[] bytes) {
            return bytes;
        }

        @Override
        public String render(byte[] value) {
            return utf8(value);
        }
    }

    static final class Strings extends BytesTensorType<String> {
        Strings() {
            super("strings");
        }

        @Override
        byte[] toBytes(String value) {
            return utf8(value);
        }

        @Override
        String fromBytes(byte[] bytes) {
            return utf8(bytes);
        }

        @Override
        public String render(String value) {
            return value;
        }
    }
}
