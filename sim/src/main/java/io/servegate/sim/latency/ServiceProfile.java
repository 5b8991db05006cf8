package io.servegate.sim.latency;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Service-time samples per batch size, measured from a real container: the file a profiling
 * run writes and {@link EmpiricalLatency} reads.
 *
 * <p>File format (CSV, UTF-8): a header {@code batch_size,service_ns}, then one measured batch
 * per line: its size and the container's own service time in nanoseconds. Blank lines and lines
 * starting with {@code #} are skipped (a profiling run writes its container and date there).
 * Sizes need not be contiguous: sizes in between are interpolated.
 *
 * @param samples sorted service times per batch size, sizes ascending
 */
public record ServiceProfile(Map<Integer, long[]> samples) {

    /** The header line of the file format. */
    public static final String HEADER = "batch_size,service_ns";

    public ServiceProfile {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("a service profile needs at least one sample");
        }
        TreeMap<Integer, long[]> copy = new TreeMap<>();
        samples.forEach((size, times) -> {
            if (size < 1 || times.length == 0) {
                throw new IllegalArgumentException("bad samples for batch size " + size);
            }
            long[] sorted = times.clone();
            Arrays.sort(sorted);
            if (sorted[0] <= 0) {
                throw new IllegalArgumentException("service times must be > 0 (batch size " + size + ")");
            }
            copy.put(size, sorted);
        });
        samples = java.util.Collections.unmodifiableMap(copy);
    }

    /** Reads a file in the format above. */
    public static ServiceProfile read(Path file) throws IOException {
        Map<Integer, List<Long>> bySize = new TreeMap<>();
        int lineNo = 0;
        for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || line.equals(HEADER)) {
                continue;
            }
            String[] f = line.split(",");
            try {
                if (f.length != 2) {
                    throw new NumberFormatException("expected 2 fields");
                }
                bySize.computeIfAbsent(Integer.parseInt(f[0].strip()), k -> new ArrayList<>())
                        .add(Long.parseLong(f[1].strip()));
            } catch (NumberFormatException e) {
                throw new IOException(file + ":" + lineNo + ": expected batch_size,service_ns: " + raw, e);
            }
        }
        Map<Integer, long[]> samples = new TreeMap<>();
        bySize.forEach((size, list) -> samples.put(size, list.stream().mapToLong(Long::longValue).toArray()));
        try {
            return new ServiceProfile(samples);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** Writes the profile in the format above, with {@code comment} lines (may be empty) first. */
    public void write(Writer out, List<String> comment) throws IOException {
        for (String c : comment) {
            out.write("# " + c + "\n");
        }
        out.write(HEADER + "\n");
        for (Map.Entry<Integer, long[]> e : samples.entrySet()) {
            for (long t : e.getValue()) {
                out.write(e.getKey() + "," + t + "\n");
            }
        }
    }
}
