package io.servegate.loadgen.load;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Collects per-request latencies (and failures) from many threads without locking, into an
 * HdrHistogram with 3 significant digits: percentiles are exact to 0.1%, whatever the range.
 */
public final class LatencyRecorder {

    private final Recorder recorder = new Recorder(3);
    private final LongAdder errors = new LongAdder();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();

    /** Records one successful request that took {@code nanos}. */
    public void record(long nanos) {
        recorder.recordValue(Math.max(0, nanos));
    }

    /** Records one failed request. */
    public void recordError(Throwable cause) {
        errors.increment();
        firstError.compareAndSet(null, cause);
    }

    /** Everything recorded so far. Call once, after recording has stopped. */
    public Snapshot snapshot() {
        return new Snapshot(recorder.getIntervalHistogram(), errors.sum(), firstError.get());
    }

    /** What a {@link LatencyRecorder} saw: latencies in nanoseconds, error count and the first error. */
    public record Snapshot(Histogram histogram, long errors, Throwable firstError) {
    }
}
