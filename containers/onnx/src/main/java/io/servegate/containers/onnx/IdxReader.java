package io.servegate.containers.onnx;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Reads unsigned-byte IDX files (the MNIST format: magic {@code 0x00 0x00 0x08 rank}, then
 * {@code rank} big-endian int32 dimensions, then the bytes), gzipped or not.
 */
final class IdxReader {

    /** An IDX array: its dimensions and its elements (unsigned bytes), row-major. */
    record IdxArray(int[] dims, byte[] data) {

        /** Element i as 0..255. */
        int get(int i) {
            return data[i] & 0xFF;
        }
    }

    private IdxReader() {
    }

    static IdxArray read(Path file) throws IOException {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file))) {
            raw.mark(2);
            boolean gzip = raw.read() == 0x1f & raw.read() == 0x8b;
            raw.reset();
            DataInputStream in = new DataInputStream(gzip ? new GZIPInputStream(raw, 1 << 16) : raw);
            int magic = in.readInt();
            if ((magic >>> 16) != 0 || ((magic >>> 8) & 0xFF) != 0x08) {
                throw new IOException(file + " is not an unsigned-byte IDX file (magic 0x"
                        + Integer.toHexString(magic) + ")");
            }
            int rank = magic & 0xFF;
            int[] dims = new int[rank];
            long size = 1;
            for (int i = 0; i < rank; i++) {
                dims[i] = in.readInt();
                size *= dims[i];
            }
            byte[] data = new byte[Math.toIntExact(size)];
            in.readFully(data);
            return new IdxArray(dims, data);
        }
    }
}
