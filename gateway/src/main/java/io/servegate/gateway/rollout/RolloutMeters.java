package io.servegate.gateway.rollout;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.core.rollout.Decision;
import io.servegate.core.rollout.GuardValue;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.VersionStats;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Metrics per rollout, tagged with the model and the candidate version: its share (every
 * gateway), its guards' values and bounds and the evidence they were computed from (the deciding
 * gateway), and its decisions (where they were taken). Gauges hold their last value.
 */
public final class RolloutMeters {

    private final MeterRegistry registry;
    /** Gauge values by meter id, as double bits. */
    private final Map<String, AtomicLong> values = new ConcurrentHashMap<>();

    public RolloutMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The candidate's share of queries now (0 once it ended, 1 once promoted). */
    void share(Rollout r) {
        gauge("servegate.rollout.share", "The rollout candidate's share of its model's queries",
                tags(r), r.share());
    }

    /** The guards as the deciding gateway last evaluated them, with the evidence summed over the fleet. */
    void guards(Rollout r, List<GuardValue> guards, RolloutEvidence e) {
        for (GuardValue g : guards) {
            Tags t = tags(r).and("guard", g.guard());
            gauge("servegate.rollout.guard", "A rollout guard's observed value", t.and("bound", "value"), g.value());
            gauge("servegate.rollout.guard", "A rollout guard's observed value", t.and("bound", "lower"), g.lower());
            gauge("servegate.rollout.guard", "A rollout guard's observed value", t.and("bound", "upper"), g.upper());
            gauge("servegate.rollout.guard", "A rollout guard's observed value", t.and("bound", "limit"), g.limit());
        }
        evidence(r, "candidate", e.candidate());
        evidence(r, "baseline", e.baseline());
        gauge("servegate.rollout.evidence", "What a rollout's decisions are made from, summed over the fleet",
                tags(r).and("side", "candidate").and("count", "warmups"), e.warmups());
    }

    private void evidence(Rollout r, String side, VersionStats s) {
        Tags t = tags(r).and("side", side);
        String d = "What a rollout's decisions are made from, summed over the fleet";
        gauge("servegate.rollout.evidence", d, t.and("count", "queries"), s.queries());
        gauge("servegate.rollout.evidence", d, t.and("count", "slo_misses"), s.sloMisses());
        gauge("servegate.rollout.evidence", d, t.and("count", "errors"), s.errors());
        gauge("servegate.rollout.evidence", d, t.and("count", "compared"), s.compared());
        gauge("servegate.rollout.evidence", d, t.and("count", "agreements"), s.agreements());
        gauge("servegate.rollout.evidence", d, t.and("count", "feedback"), s.feedback());
    }

    /** Counts one decision by its kind. */
    void decided(Rollout r, Decision d) {
        Counter.builder("servegate.rollout.decisions").description("Rollout decisions, by kind")
                .tags(tags(r).and("kind", d.kind().name().toLowerCase(Locale.ROOT))).register(registry).increment();
    }

    private static Tags tags(Rollout r) {
        return Tags.of("model", r.model(), "candidate", r.candidate());
    }

    private void gauge(String name, String description, Tags tags, double value) {
        String key = name + tags;
        AtomicLong holder = values.get(key);
        if (holder == null) {
            holder = values.computeIfAbsent(key, k -> {
                AtomicLong h = new AtomicLong();
                Gauge.builder(name, h, a -> Double.longBitsToDouble(a.get())).description(description).tags(tags)
                        .register(registry);
                return h;
            });
        }
        holder.set(Double.doubleToLongBits(value));
    }
}
