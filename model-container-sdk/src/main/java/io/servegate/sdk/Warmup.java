package io.servegate.sdk;

import io.servegate.oip.client.TensorType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Warm-up before ready, as Triton's {@code model_warmup} and the Python SDK's: the predictor
 * runs every batch size it will be sent before the container says it is ready, so that one-off
 * costs (JIT compilation, an accelerator's autotuning of each new shape, lazy allocations) are
 * paid before the gateway measures or sends anything. Each size runs {@code runs} times: the first
 * run's time is the cold cost, the last the warm one, and both are reported in the model's
 * metadata ({@link #BATCH_SIZES}, {@link #FIRST_NS}, {@link #LAST_NS}).
 *
 * @param batchSizes the sizes to run, ascending; empty turns the warm-up off
 * @param runs       runs per size, {@code >= 1}
 * @param sample     the input each batch repeats; null when none could be made up (no warm-up)
 * @param <X>        the input type
 */
public record Warmup<X>(List<Integer> batchSizes, int runs, X sample) {

    /** ModelMetadata parameter: the sizes warmed, comma-separated. */
    public static final String BATCH_SIZES = "servegate_warmup_batch_sizes";
    /** ModelMetadata parameter: each size's first (cold) run, nanoseconds, comma-separated. */
    public static final String FIRST_NS = "servegate_warmup_first_ns";
    /** ModelMetadata parameter: each size's last (warm) run, nanoseconds, comma-separated. */
    public static final String LAST_NS = "servegate_warmup_last_ns";

    public Warmup {
        batchSizes = List.copyOf(new TreeSet<>(batchSizes));
        if (!batchSizes.isEmpty() && batchSizes.get(0) <= 0) {
            throw new IllegalArgumentException("warm-up batch sizes must be positive, got " + batchSizes.get(0));
        }
        if (runs <= 0) {
            throw new IllegalArgumentException("warm-up runs must be positive, got " + runs);
        }
    }

    /**
     * The plan for a model: {@code batchSizes}, or when null every size from 1 to
     * {@code maxBatchSize} (1 when it declares none, 0); {@code sample}, or when null zeros of
     * {@code inputLength} values for a numeric type (none for other types, or an undeclared length).
     *
     * @throws IllegalArgumentException for a size above a declared {@code maxBatchSize}, or a sample of another length
     */
    public static <X> Warmup<X> plan(TensorType<X> type, int inputLength, int maxBatchSize, List<Integer> batchSizes,
            int runs, X sample) {
        List<Integer> sizes = batchSizes != null ? batchSizes
                : maxBatchSize > 0 ? rangeClosed(maxBatchSize) : List.of(1);
        for (int b : sizes) {
            if (maxBatchSize > 0 && b > maxBatchSize) {
                throw new IllegalArgumentException("warm-up batch size " + b + " exceeds the maximum batch size "
                        + maxBatchSize);
            }
        }
        if (sample != null && inputLength > 0 && type.numeric() && type.length(sample) != inputLength) {
            throw new IllegalArgumentException("the warm-up input has " + type.length(sample)
                    + " values; the model expects " + inputLength);
        }
        return new Warmup<>(sizes, runs, sample != null ? sample : zeros(type, inputLength));
    }

    /** Parses {@code "1,2,4"}; {@code "none"} or blank is no warm-up (empty). */
    public static List<Integer> parseBatchSizes(String text) {
        String t = text == null ? "" : text.strip();
        if (t.isEmpty() || t.equalsIgnoreCase("none")) {
            return List.of();
        }
        try {
            List<Integer> out = new ArrayList<>();
            for (String part : t.split(",")) {
                out.add(Integer.parseInt(part.strip()));
            }
            return out;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("warm-up batch sizes must be comma-separated integers or 'none', got '"
                    + text + "'", e);
        }
    }

    /** Whether it will run anything. */
    public boolean active() {
        return !batchSizes.isEmpty() && sample != null;
    }

    /**
     * Runs {@code predictor} over the plan.
     *
     * @return the metadata parameters that report it; empty when it ran nothing
     * @throws Exception what the predictor throws: a model that cannot answer its own warm-up is not ready
     */
    public Map<String, String> run(Predictor<X, ?> predictor) throws Exception {
        if (!active()) {
            return Map.of();
        }
        long[] first = new long[batchSizes.size()];
        long[] last = new long[batchSizes.size()];
        for (int i = 0; i < batchSizes.size(); i++) {
            List<X> batch = Collections.nCopies(batchSizes.get(i), sample);
            for (int r = 0; r < runs; r++) {
                long start = System.nanoTime();
                predictor.predictBatch(batch);
                long took = System.nanoTime() - start;
                if (r == 0) {
                    first[i] = took;
                }
                last[i] = took;
            }
        }
        Map<String, String> report = new LinkedHashMap<>();
        report.put(BATCH_SIZES, batchSizes.stream().map(String::valueOf).collect(Collectors.joining(",")));
        report.put(FIRST_NS, join(first));
        report.put(LAST_NS, join(last));
        return report;
    }

    private static List<Integer> rangeClosed(int n) {
        List<Integer> out = new ArrayList<>(n);
        for (int b = 1; b <= n; b++) {
            out.add(b);
        }
        return out;
    }

    private static String join(long[] values) {
        return java.util.Arrays.stream(values).mapToObj(String::valueOf).collect(Collectors.joining(","));
    }

    @SuppressWarnings("unchecked")
    private static <X> X zeros(TensorType<X> type, int length) {
        if (length <= 0) {
            return null;
        }
        return (X) switch (type.clipperName()) {
            case "ints" -> new int[length];
            case "floats" -> new float[length];
            case "doubles" -> new double[length];
            case "bytes" -> new byte[length];
            default -> null; // strings: a made-up text is no sample of the model's inputs
        };
    }
}
