package io.servegate.loadgen.load;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts what happens to requests second by second: each request is counted in the second it was
 * sent (from a common start), as a prediction within the SLO (from the moment it was sent), a late
 * prediction, a default or a failure, so that a run's timeline shows when predictions stopped and
 * when they resumed. {@link #openWindow Windows} count the same for the requests sent in a span
 * that starts at an event (a gateway started, or reported ready), to the nanosecond.
 */
public final class TimelineWorkload implements Workload {

    private static final int SENT = 0;
    private static final int IN_SLO = 1;
    private static final int LATE = 2;
    private static final int DEFAULTS = 3;
    private static final int FAILED = 4;
    private static final int KINDS = 5;

    private final Workload inner;
    private final long startNanos;
    private final long sloNanos;
    private final int seconds;
    private final AtomicLongArray counts;
    private volatile long markNanos = Long.MAX_VALUE;
    private final AtomicLong firstPredictionAfterMark = new AtomicLong(Long.MAX_VALUE);
    private final List<Span> windows = new CopyOnWriteArrayList<>();

    private record Span(String name, long fromNanos, long lengthNanos, AtomicLongArray counts) {

        boolean holds(long nanos) {
            return nanos - fromNanos >= 0 && nanos - fromNanos < lengthNanos;
        }
    }

    /**
     * @param startNanos second 0 begins here ({@link System#nanoTime()})
     * @param seconds how many seconds are counted; requests sent later are sent, not counted
     */
    public TimelineWorkload(Workload inner, long startNanos, long sloNanos, int seconds) {
        this.inner = inner;
        this.startNanos = startNanos;
        this.sloNanos = sloNanos;
        this.seconds = seconds;
        this.counts = new AtomicLongArray(seconds * KINDS);
    }

    @Override
    public int inputsPerRequest() {
        return inner.inputsPerRequest();
    }

    @Override
    public CompletableFuture<?> send() {
        long sent = System.nanoTime();
        int second = (int) ((sent - startNanos) / 1_000_000_000L);
        boolean afterMark = sent - markNanos >= 0;
        CompletableFuture<?> answer = inner.send();
        List<Span> in = windows.stream().filter(w -> w.holds(sent)).toList();
        in.forEach(w -> w.counts.incrementAndGet(SENT));
        boolean counted = second >= 0 && second < seconds;
        if (counted) {
            counts.incrementAndGet(second * KINDS + SENT);
        } else if (in.isEmpty()) {
            return answer;
        }
        answer.whenComplete((result, failure) -> {
            long now = System.nanoTime();
            int kind;
            if (failure != null) {
                kind = FAILED;
            } else if (result instanceof GatewayAnswer a && a.isDefault()) {
                kind = DEFAULTS;
            } else {
                kind = now - sent <= sloNanos ? IN_SLO : LATE;
                if (afterMark) {
                    firstPredictionAfterMark.accumulateAndGet(now, Math::min);
                }
            }
            if (counted) {
                counts.incrementAndGet(second * KINDS + kind);
            }
            in.forEach(w -> w.counts.incrementAndGet(kind));
        });
        return answer;
    }

    /**
     * Counts, from now on, what becomes of the requests sent from {@code fromNanos} ({@link
     * System#nanoTime()}, now or later) for {@code lengthNanos}; requests sent before this call are
     * not counted, so open a window as its event happens.
     */
    public void openWindow(String name, long fromNanos, long lengthNanos) {
        windows.add(new Span(name, fromNanos, lengthNanos, new AtomicLongArray(KINDS)));
    }

    /**
     * What became of the requests sent in a window.
     *
     * @param fromS where it starts, in seconds since the timeline's start
     */
    public record Window(String name, double fromS, double lengthS, long sent, long inSlo, long late, long defaults,
            long failed) {

        /** The share of the requests sent that did not get a prediction within the SLO; 0 when none were sent. */
        public double lostShare() {
            return sent == 0 ? 0 : (double) (sent - inSlo) / sent;
        }

        /** Requests answered (in time or not, a default or a failure): all of them once the load has drained. */
        public long answered() {
            return inSlo + late + defaults + failed;
        }
    }

    /** The windows opened so far, in the order they were opened. */
    public List<Window> windows() {
        return windows.stream().map(w -> new Window(w.name, (w.fromNanos - startNanos) / 1e9, w.lengthNanos / 1e9,
                w.counts.get(SENT), w.counts.get(IN_SLO), w.counts.get(LATE), w.counts.get(DEFAULTS),
                w.counts.get(FAILED))).toList();
    }

    /** Marks an event (a gateway killed): {@link #firstPredictionAfterMark} watches the requests sent from now on. */
    public void mark(long nanos) {
        markNanos = nanos;
    }

    /**
     * When ({@link System#nanoTime()}) the first prediction for a request sent after the mark
     * arrived, or empty if none did.
     */
    public OptionalLong firstPredictionAfterMark() {
        long t = firstPredictionAfterMark.get();
        return t == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(t);
    }

    /**
     * One second of the timeline: requests sent in it and what became of them.
     *
     * @param second seconds since the start
     */
    public record Second(int second, long sent, long inSlo, long late, long defaults, long failed) {

        /** Predictions, in time or not. */
        public long predicted() {
            return inSlo + late;
        }
    }

    /** The timeline so far. */
    public List<Second> seconds() {
        List<Second> out = new ArrayList<>();
        for (int s = 0; s < seconds; s++) {
            int b = s * KINDS;
            out.add(new Second(s, counts.get(b + SENT), counts.get(b + IN_SLO), counts.get(b + LATE),
                    counts.get(b + DEFAULTS), counts.get(b + FAILED)));
        }
        return out;
    }
}
