package io.servegate.core.trace;

import io.servegate.core.scheduling.PolicyKind;
import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Records a live run so that the simulator can replay it: the queries' arrivals with their
 * deadlines, and each batch's replica, size and service time. Thread-safe: many threads may
 * append at once; a line is formatted by its caller and written whole under a short lock, into a
 * buffer. The first I/O error stops the recording quietly (serving must not fail for it) and is
 * thrown by {@link #close}.
 *
 * <p><b>Format</b> ({@value #FORMAT}): UTF-8 CSV, one record per line, no header; times in
 * nanoseconds on the recorder's clock (any origin: a reader subtracts the first time). Lines
 * starting with {@code #} are comments. Model and replica names are percent-encoded where they
 * contain {@code %}, {@code ,}, CR or LF. Records:
 * <pre>
 * model,MODEL,POLICY,SLO_NS                         the model's scheduling policy and SLO
 * replica,MODEL,REPLICA,CONCURRENCY,T_NS            a replica joins (available from then)
 * removed,MODEL,REPLICA,T_NS                        a replica leaves or dies
 * arrival,MODEL,T_NS,DEADLINE_NS                    a query arrives
 * batch,MODEL,REPLICA,SENT_NS,SIZE,SERVICE_NS,ROUND_TRIP_NS
 *                                                   a batch completed: the container's service time,
 *                                                   and the round trip (-1 if unknown)
 * </pre>
 * Lines from concurrent threads may be slightly out of time order; readers sort.
 */
public final class RunRecorder implements Closeable {

    /** The format's name and version, written as the first line. */
    public static final String FORMAT = "servegate-recording v1";

    private final Writer out;
    private IOException error;
    private boolean closed;

    /** Records to {@code out}, which this recorder buffers and closes. */
    public RunRecorder(Writer out) {
        this.out = out instanceof BufferedWriter ? out : new BufferedWriter(out, 1 << 16);
        append("# " + FORMAT + "\n");
    }

    /** Records to a new file (replacing one that exists). */
    public static RunRecorder open(Path file) throws IOException {
        return new RunRecorder(Files.newBufferedWriter(file, StandardCharsets.UTF_8));
    }

    /** A model's policy and SLO. */
    public void model(String model, PolicyKind policy, long sloNanos) {
        append(new StringBuilder(64).append("model,").append(encode(model)).append(',').append(policy.id())
                .append(',').append(sloNanos).append('\n').toString());
    }

    /** A replica joins. */
    public void replica(String model, String replica, int concurrency, long now) {
        append(new StringBuilder(64).append("replica,").append(encode(model)).append(',').append(encode(replica))
                .append(',').append(concurrency).append(',').append(now).append('\n').toString());
    }

    /** A replica leaves or dies. */
    public void removed(String model, String replica, long now) {
        append(new StringBuilder(64).append("removed,").append(encode(model)).append(',').append(encode(replica))
                .append(',').append(now).append('\n').toString());
    }

    /** A query arrives. */
    public void arrival(String model, long now, long deadline) {
        append(new StringBuilder(48).append("arrival,").append(encode(model)).append(',').append(now).append(',')
                .append(deadline).append('\n').toString());
    }

    /**
     * A batch completed.
     *
     * @param roundTripNanos sent to answered, or -1 if unknown
     */
    public void batch(String model, String replica, long sentAt, int size, long serviceNanos, long roundTripNanos) {
        append(new StringBuilder(80).append("batch,").append(encode(model)).append(',').append(encode(replica))
                .append(',').append(sentAt).append(',').append(size).append(',').append(serviceNanos).append(',')
                .append(roundTripNanos).append('\n').toString());
    }

    /** Writes what is buffered. */
    public synchronized void flush() throws IOException {
        if (error == null && !closed) {
            out.flush();
        }
    }

    /** The first I/O error, which stopped the recording; null while none. */
    public synchronized IOException error() {
        return error;
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            out.close();
        } catch (IOException e) {
            if (error == null) {
                error = e;
            }
        }
        if (error != null) {
            throw error;
        }
    }

    private synchronized void append(String line) {
        if (error != null || closed) {
            return;
        }
        try {
            out.write(line);
        } catch (IOException e) {
            error = e;
        }
    }

    /** A name with {@code %}, {@code ,}, CR and LF percent-encoded. */
    public static String encode(String name) {
        StringBuilder sb = null;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            String esc = switch (c) {
                case '%' -> "%25";
                case ',' -> "%2C";
                case '\n' -> "%0A";
                case '\r' -> "%0D";
                default -> null;
            };
            if (esc != null && sb == null) {
                sb = new StringBuilder(name.length() + 8).append(name, 0, i);
            }
            if (sb != null) {
                sb.append(esc != null ? esc : String.valueOf(c));
            }
        }
        return sb == null ? name : sb.toString();
    }

    /** The inverse of {@link #encode}. */
    public static String decode(String field) {
        if (field.indexOf('%') < 0) {
            return field;
        }
        return field.replace("%2C", ",").replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%");
    }
}
