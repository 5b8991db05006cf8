package io.servegate.core.selection;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/**
 * Binary encoding of a {@link WeightedState}, schema version 1:
 * <pre>
 *   byte    schema version (1)
 *   byte    policy tag ('3' = exp3, '4' = exp4), so one policy never reads the other's state
 *   long    observations
 *   int     model count n
 *   n times { modified-UTF-8 model name; double natural-log weight }
 * </pre>
 * Big-endian ({@link DataOutputStream}). Decoding renormalizes the weights, so a state written
 * under another weight floor is read safely.
 */
final class WeightedStateCodec implements StateCodec<WeightedState> {

    static final byte VERSION = 1;
    /** The smallest possible encoding of one model: a 2-byte name length, 1 character, 8 bytes. */
    private static final int MIN_MODEL_BYTES = 11;

    private final byte tag;
    private final String policy;

    WeightedStateCodec(char tag, String policy) {
        this.tag = (byte) tag;
        this.policy = policy;
    }

    @Override
    public byte[] encode(WeightedState state) {
        if (state == null) {
            throw new IllegalArgumentException("state must not be null");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(14 + state.size() * 24);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeByte(tag);
            out.writeLong(state.observations());
            out.writeInt(state.size());
            double[] lw = state.logWeightsUnsafe();
            for (int i = 0; i < lw.length; i++) {
                out.writeUTF(state.models().get(i));
                out.writeDouble(lw[i]);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot happen with an in-memory stream", e);
        }
        return bytes.toByteArray();
    }

    @Override
    public WeightedState decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            throw new StateCodecException(policy + " state is empty");
        }
        if (bytes[0] != VERSION) {
            throw new StateCodecException("unsupported " + policy + " state schema version " + bytes[0]
                    + " (this gateway reads version " + VERSION
                    + "); it was written by a newer gateway or is corrupt");
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, 1, bytes.length - 1))) {
            byte t = in.readByte();
            if (t != tag) {
                throw new StateCodecException("state is not " + policy + " state (policy tag '"
                        + printable(t) + "', expected '" + (char) tag + "'); was the app's selection policy changed?");
            }
            long observations = in.readLong();
            int n = in.readInt();
            if (observations < 0 || n < 0 || (long) n * MIN_MODEL_BYTES > in.available()) {
                throw new StateCodecException("corrupt " + policy + " state: " + n + " models, "
                        + observations + " observations in " + bytes.length + " bytes");
            }
            List<String> models = new ArrayList<>(n);
            HashSet<String> seen = new HashSet<>();
            double[] lw = new double[n];
            for (int i = 0; i < n; i++) {
                String m = in.readUTF();
                if (m.isBlank() || !seen.add(m)) {
                    throw new StateCodecException("corrupt " + policy + " state: blank or duplicate model '" + m + "'");
                }
                models.add(m);
                lw[i] = in.readDouble();
                if (!Double.isFinite(lw[i])) {
                    throw new StateCodecException("corrupt " + policy + " state: weight " + lw[i] + " for '" + m + "'");
                }
            }
            if (in.available() > 0) {
                throw new StateCodecException("corrupt " + policy + " state: " + in.available() + " trailing bytes");
            }
            return new WeightedState(List.copyOf(models), WeightedState.normalize(lw), observations);
        } catch (EOFException e) {
            throw new StateCodecException("truncated " + policy + " state (" + bytes.length + " bytes)", e);
        } catch (IOException e) {
            // readUTF on malformed modified UTF-8
            throw new StateCodecException("corrupt " + policy + " state: " + e.getMessage(), e);
        }
    }

    static String printable(byte b) {
        return b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("0x%02x", b & 0xff);
    }
}
