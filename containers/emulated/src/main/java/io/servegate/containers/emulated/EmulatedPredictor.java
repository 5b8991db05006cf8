package io.servegate.containers.emulated;

import io.servegate.sdk.Predictor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Emulates a GPU-hosted classifier's cost model: a batch of {@code b} inputs takes
 * {@code β + α·b} milliseconds (a fixed launch cost plus a per-input cost, the shape Clipper and
 * Clockwork measure on real accelerators), after which every input gets a deterministic label.
 *
 * <p>Labels, always in {@code 0..classes-1} and rendered as decimal strings:
 * <ul>
 *   <li>numeric vectors ({@code int[]}, {@code float[]}, {@code double[]}): the index of the
 *       largest element (the first on ties; NaN never wins) modulo {@code classes}, so a vector
 *       of logits or a one-hot vector gets the class it points at;</li>
 *   <li>{@code byte[]} and {@code String} (as UTF-8): the CRC-32 of the bytes modulo
 *       {@code classes}.</li>
 * </ul>
 * The same input therefore always gets the same label, in any batch and in any process.
 *
 * <p>The {@link Pathologies} of real accelerators can be added: a transfer time proportional to
 * the batch's input bytes (numbers at their width, strings as UTF-8), periodic {@link Stalls}
 * during which no batch makes progress, a slow first batch of each size, and seeded lognormal
 * jitter.
 *
 * <p>Safe under any container concurrency: its only state, the sizes it has run and the jitter's
 * random numbers, is thread-safe.
 *
 * @param <X> one of the SDK's input types
 */
public final class EmulatedPredictor<X> implements Predictor<X, String> {

    private static final Logger LOG = LoggerFactory.getLogger(EmulatedPredictor.class);

    /** Below this, spin instead of parking: parkNanos can overshoot by tens of microseconds. */
    private static final long SPIN_NANOS = 20_000;

    private final double betaMs;
    private final double alphaMs;
    private final int classes;
    /** The slow-down of the current batch (1 = none); {@code --slow-factor} makes it 10 for a while. */
    private final java.util.function.DoubleSupplier slowdown;
    private final Pathologies pathologies;
    /** The batch sizes run so far: the first batch of each is cold. */
    private final Set<Integer> warmSizes = ConcurrentHashMap.newKeySet();
    private final Random jitter;

    /**
     * @param betaMs fixed cost of any batch, in milliseconds (≥ 0)
     * @param alphaMs cost of each input of a batch, in milliseconds (≥ 0)
     * @param classes number of labels (≥ 1)
     */
    public EmulatedPredictor(double betaMs, double alphaMs, int classes) {
        this(betaMs, alphaMs, classes, () -> 1);
    }

    /** As above, with each batch's service time multiplied by what {@code slowdown} says at the time. */
    public EmulatedPredictor(double betaMs, double alphaMs, int classes, java.util.function.DoubleSupplier slowdown) {
        this(betaMs, alphaMs, classes, slowdown, Pathologies.NONE);
    }

    /** As above, with what a real accelerator adds to β + α·b. */
    EmulatedPredictor(double betaMs, double alphaMs, int classes, java.util.function.DoubleSupplier slowdown,
            Pathologies pathologies) {
        if (!(betaMs >= 0) || !(alphaMs >= 0) || Double.isInfinite(betaMs) || Double.isInfinite(alphaMs)) {
            throw new IllegalArgumentException("beta and alpha must be finite and non-negative, got beta="
                    + betaMs + " alpha=" + alphaMs);
        }
        if (classes < 1) {
            throw new IllegalArgumentException("classes must be at least 1, got " + classes);
        }
        this.betaMs = betaMs;
        this.alphaMs = alphaMs;
        this.classes = classes;
        this.slowdown = slowdown;
        this.pathologies = pathologies;
        this.jitter = new Random(pathologies.seed());
    }

    /** The emulated service time of a batch of {@code batchSize}: β + α·b, in nanoseconds. */
    public long serviceTimeNanos(int batchSize) {
        return Math.round((betaMs + alphaMs * batchSize) * 1_000_000.0);
    }

    /** The transfer time of {@code inputs}: their bytes / bytes-per-ms, in nanoseconds (0 when not set). */
    public long transferNanos(List<X> inputs) {
        if (pathologies.bytesPerMs() == 0) {
            return 0;
        }
        long bytes = 0;
        for (X input : inputs) {
            bytes += bytes(input);
        }
        return Math.round(bytes / pathologies.bytesPerMs() * 1_000_000.0);
    }

    /**
     * How long the container works on this batch, stalls aside: β + α·b and the transfer time,
     * times the slow-down and the jitter, plus the cold time if it is the first batch of its size.
     * Each call draws the jitter and marks the size warm.
     */
    long batchNanos(List<X> inputs) {
        double factor = slowdown.getAsDouble();
        double sigma = pathologies.jitterSigma();
        if (sigma > 0) {
            factor *= Math.exp(sigma * jitter.nextGaussian() - sigma * sigma / 2);
        }
        long nanos = Math.round((serviceTimeNanos(inputs.size()) + transferNanos(inputs)) * factor);
        return warmSizes.add(inputs.size()) ? nanos + pathologies.coldBatchNanos() : nanos;
    }

    @Override
    public List<String> predictBatch(List<X> inputs) {
        long start = System.nanoTime();
        long nanos = batchNanos(inputs);
        LOG.debug("predicting a batch of {} for {} ns", inputs.size(), nanos);
        List<String> labels = new ArrayList<>(inputs.size());
        for (X input : inputs) {
            labels.add(Integer.toString(label(input)));
        }
        sleepUntil(pathologies.stalls().finish(start, nanos));
        return labels;
    }

    private static long bytes(Object input) {
        if (input instanceof float[] v) {
            return 4L * v.length;
        }
        if (input instanceof double[] v) {
            return 8L * v.length;
        }
        if (input instanceof int[] v) {
            return 4L * v.length;
        }
        if (input instanceof byte[] b) {
            return b.length;
        }
        if (input instanceof String s) {
            return s.getBytes(StandardCharsets.UTF_8).length;
        }
        throw new IllegalArgumentException("unsupported input type " + (input == null ? "null" : input.getClass()));
    }

    /** The label of one input, as described in the class comment. */
    public int label(X input) {
        if (input instanceof float[] v) {
            return argmax(v.length, i -> v[i]) % classes;
        }
        if (input instanceof double[] v) {
            return argmax(v.length, i -> v[i]) % classes;
        }
        if (input instanceof int[] v) {
            return argmax(v.length, i -> v[i]) % classes;
        }
        if (input instanceof byte[] b) {
            return hash(b);
        }
        if (input instanceof String s) {
            return hash(s.getBytes(StandardCharsets.UTF_8));
        }
        throw new IllegalArgumentException("unsupported input type " + (input == null ? "null" : input.getClass()));
    }

    private static int argmax(int length, java.util.function.IntToDoubleFunction element) {
        int best = 0;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < length; i++) {
            double x = element.applyAsDouble(i);
            if (x > max) {
                max = x;
                best = i;
            }
        }
        return best;
    }

    private int hash(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return (int) (crc.getValue() % classes);
    }

    /** Parks until {@code deadline} (a {@link System#nanoTime()} value), spinning the last few microseconds. */
    static void sleepUntil(long deadline) {
        long remaining;
        while ((remaining = deadline - System.nanoTime()) > 0) {
            if (remaining > SPIN_NANOS) {
                LockSupport.parkNanos(remaining - SPIN_NANOS);
            } else {
                Thread.onSpinWait();
            }
        }
    }
}
