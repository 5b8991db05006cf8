package io.servegate.loadgen.load;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ObjLongConsumer;

/**
 * Counts the answers as a load driver observes them: predictions, defaults by explanation, answers
 * slower than a threshold, and goodput (predictions no slower than the threshold, the SLO). An
 * answer that is not a {@link GatewayAnswer} (a container's, straight over gRPC) is a prediction.
 * Thread-safe; pass it as a driver's observer.
 */
public final class AnswerTally implements ObjLongConsumer<Object> {

    private final long lateThresholdNanos;
    private final LongAdder predictions = new LongAdder();
    private final LongAdder defaults = new LongAdder();
    private final LongAdder late = new LongAdder();
    private final LongAdder goodput = new LongAdder();
    private final Map<String, LongAdder> byExplanation = new ConcurrentHashMap<>();

    /** @param lateThresholdNanos answers slower than this count as late; {@code Long.MAX_VALUE} for none */
    public AnswerTally(long lateThresholdNanos) {
        this.lateThresholdNanos = lateThresholdNanos;
    }

    @Override
    public void accept(Object answer, long latencyNanos) {
        boolean onTime = latencyNanos <= lateThresholdNanos;
        if (!onTime) {
            late.increment();
        }
        if (!(answer instanceof GatewayAnswer a) || !a.isDefault()) {
            predictions.increment();
            if (onTime) {
                goodput.increment();
            }
        } else {
            defaults.increment();
            byExplanation.computeIfAbsent(String.valueOf(a.explanation()), k -> new LongAdder()).increment();
        }
    }

    /** The counts so far. */
    public Counts counts() {
        Map<String, Long> explained = new TreeMap<>();
        byExplanation.forEach((k, v) -> explained.put(k, v.sum()));
        return new Counts(predictions.sum(), defaults.sum(), explained, late.sum(), goodput.sum(),
                lateThresholdNanos == Long.MAX_VALUE ? null : lateThresholdNanos / 1e6);
    }

    /**
     * @param predictions answers that were a model's prediction
     * @param defaults answers that were the app's default output
     * @param defaultsByExplanation defaults per the gateway's explanation
     * @param late answers (either kind) slower than the threshold
     * @param goodput predictions (not defaults) no slower than the threshold
     * @param lateThresholdMs the threshold, or null if none was set
     */
    public record Counts(long predictions, long defaults, Map<String, Long> defaultsByExplanation, long late,
            long goodput, Double lateThresholdMs) {
    }
}
