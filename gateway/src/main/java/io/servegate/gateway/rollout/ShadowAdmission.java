package io.servegate.gateway.rollout;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.rollout.Rollout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.function.BiPredicate;

/**
 * Whether a shadow copy of a query may be sent to a rollout's candidate now: only when the
 * candidate's scheduler reports room (it holds less than one batch waiting) and fewer than
 * {@code maxInFlight} copies are in flight from this gateway. A copy that may not go is dropped,
 * never queued, so shadow copies are the first work shed under load and never wait in front of
 * a user's query. Counts {@code servegate.rollout.shadow} by outcome.
 */
public final class ShadowAdmission {

    /** Why a copy went or not, the {@code outcome} tag of {@code servegate.rollout.shadow}. */
    enum Outcome { SENT, DROPPED_BUSY, DROPPED_IN_FLIGHT }

    private final BiPredicate<String, String> room;
    private final Semaphore inFlight;
    private final MeterRegistry meters;
    /** The counters by tags, so that a shadowed query does not look its meter up in the registry. */
    private final Map<CounterKey, Counter> counters = new ConcurrentHashMap<>();

    /**
     * @param room        whether a model version's scheduler has room for one more query now
     * @param maxInFlight copies in flight at most; 0 sends none
     */
    public ShadowAdmission(BiPredicate<String, String> room, int maxInFlight, MeterRegistry meters) {
        if (maxInFlight < 0) {
            throw new IllegalArgumentException("shadow copies in flight must not be negative, was " + maxInFlight);
        }
        this.room = room;
        this.inFlight = new Semaphore(maxInFlight);
        this.meters = meters;
    }

    /** @return whether a copy for {@code r}'s candidate may go; if so, {@link #release()} once it ended */
    boolean tryAcquire(Rollout r) {
        Outcome o;
        if (!inFlight.tryAcquire()) {
            o = Outcome.DROPPED_IN_FLIGHT;
        } else if (!room.test(r.model(), r.candidate())) {
            inFlight.release();
            o = Outcome.DROPPED_BUSY;
        } else {
            o = Outcome.SENT;
        }
        counters.computeIfAbsent(new CounterKey(r.model(), r.candidate(), o), k -> Counter
                .builder("servegate.rollout.shadow").description("Shadow copies of queries, sent or dropped")
                .tags("model", k.model(), "candidate", k.candidate(),
                        "outcome", k.outcome().name().toLowerCase(java.util.Locale.ROOT))
                .register(meters)).increment();
        return o == Outcome.SENT;
    }

    /** One copy ended (answered, failed or cancelled). */
    void release() {
        inFlight.release();
    }


    private record CounterKey(String model, String candidate, Outcome outcome) {
    }
}
