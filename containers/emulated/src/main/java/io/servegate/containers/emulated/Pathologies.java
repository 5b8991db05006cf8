package io.servegate.containers.emulated;

/**
 * What a real accelerator adds to the emulated β + α·b, each off at zero: a transfer time of
 * {@code 1 / bytesPerMs} ms per input byte (a host-to-device copy), periodic {@link Stalls}, a
 * first batch of each size {@code coldBatchNanos} slower (cuDNN autotuning the shape, a JIT
 * compiling it), and lognormal jitter exp(σ·Z − σ²/2) on every batch, whose mean is 1, so that
 * the mean stays β + α·b while one batch in a hundred takes about e^{2.33σ − σ²/2} times it.
 * The jitter is drawn from a {@link java.util.Random} seeded with {@code seed}: the same run
 * gets the same times.
 */
record Pathologies(double bytesPerMs, Stalls stalls, long coldBatchNanos, double jitterSigma, long seed) {

    /** None of them. */
    static final Pathologies NONE = new Pathologies(0, Stalls.NONE, 0, 0, 1);

    Pathologies {
        if (!(bytesPerMs >= 0) || Double.isInfinite(bytesPerMs)) {
            throw new IllegalArgumentException("bytes per ms must be finite and non-negative, got " + bytesPerMs);
        }
        if (coldBatchNanos < 0) {
            throw new IllegalArgumentException("the cold batch time must be non-negative, got " + coldBatchNanos / 1e6
                    + " ms");
        }
        if (!(jitterSigma >= 0) || Double.isInfinite(jitterSigma)) {
            throw new IllegalArgumentException("the jitter's sigma must be finite and non-negative, got " + jitterSigma);
        }
    }
}
