package io.servegate.oip.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.servegate.oip.InferTensorContents;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Variable-length elements (strings or byte arrays), carried as one BYTES tensor of shape [N]; a
 * batch of equal-sized elements may also arrive as one UINT8 tensor [N, d1, ...] whose rows are
 * the elements, back to back.
 */
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
        // the buffer is this method's own: wrapped, not copied
        return new EncodedTensor(datatype(), List.of((long) batch.size()), UnsafeByteOperations.unsafeWrap(buf.array()));
    }

    @Override
    public List<T> decode(String datatype, List<Long> shape, ByteString raw) {
        if (UINT8.equals(datatype)) {
            int n = batchSize(shape.isEmpty() ? shape : shape.subList(0, 1));
            long row = rowBytes(shape);
            if (raw.size() != n * row) {
                throw new TensorFormatException("raw contents hold " + raw.size() + " bytes but shape " + shape
                        + " of UINT8 needs " + n * row);
            }
            List<T> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte[] b = new byte[(int) row];
                raw.copyTo(b, (int) (i * row), 0, (int) row);
                out.add(fromBytes(b));
            }
            return out;
        }
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
        if (UINT8.equals(datatype)) {
            throw new TensorFormatException("UINT8 inputs must be sent as raw contents");
        }
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

    /** The bytes of one element of a UINT8 tensor [N, d1, ...]: d1 * ..., or 1 for [N]. */
    private static long rowBytes(List<Long> shape) {
        long row = 1;
        for (long d : shape.subList(1, shape.size())) {
            if (d <= 0 || d > Integer.MAX_VALUE || row * d > Integer.MAX_VALUE) {
                throw new TensorFormatException("invalid dimension in UINT8 input shape " + shape);
            }
            row *= d;
        }
        return row;
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
        public EncodedTensor encodeFixedSize(List<byte[]> batch) {
            if (batch.isEmpty()) {
                return null;
            }
            int length = batch.get(0).length;
            for (byte[] b : batch) {
                if (b.length != length) {
                    return null;
                }
            }
            byte[] all = new byte[Math.multiplyExact(batch.size(), length)];
            for (int i = 0; i < batch.size(); i++) {
                System.arraycopy(batch.get(i), 0, all, i * length, length);
            }
            return new EncodedTensor(UINT8, List.of((long) batch.size(), (long) length),
                    UnsafeByteOperations.unsafeWrap(all));
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
