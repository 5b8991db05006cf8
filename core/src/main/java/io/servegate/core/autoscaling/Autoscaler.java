package io.servegate.core.autoscaling;

import java.util.Locale;
import java.util.Objects;

/**
 * Decides how many replicas one model version runs, from its {@link ScalingSignals}, called once
 * per tick (a second, say). Up is at once, at most doubling per tick; down is slow: only after
 * {@code cooldown} without a change, while the idle fraction has stayed above its threshold as
 * long, and never below what the busiest rate of that cooldown needs at 90 % of the planned
 * utilisation. The number stays within {@code [min, max]}. Pure and
 * deterministic: time comes with the signals, so the same signals give the same decisions in
 * the gateway and in the simulator. Not thread-safe.
 */
public final class Autoscaler {

    /** A tick with fewer arrivals than this says nothing about the bad rate. */
    static final int MIN_QUERIES = 20;
    /**
     * Removal plans for this share of the utilisation: the hysteresis that keeps the replicas
     * left from being added back by the next tick's noise.
     */
    static final double DOWN_HEADROOM = 0.9;

    private final AutoscalerConfig config;
    private long lastChangeAt = Long.MIN_VALUE;
    private long lastUpAt = Long.MIN_VALUE;
    private long idleSince = Long.MIN_VALUE;
    private long prevArrived = -1;
    private long prevBad;
    private double lastBadRate;

    public Autoscaler(AutoscalerConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    public AutoscalerConfig config() {
        return config;
    }

    /** The bad rate of the last tick (0 when it saw too few queries). */
    public double lastBadRate() {
        return lastBadRate;
    }

    /**
     * One tick.
     *
     * @return the change to make, or null to keep {@code signals.replicas()}
     */
    public ScalingDecision decide(ScalingSignals s) {
        long now = s.atNanos();
        int n = s.replicas();
        double badRate = badRate(s);
        boolean idle = !Double.isNaN(s.idleFraction()) && s.idleFraction() >= config.idleThreshold()
                && badRate < config.badRateThreshold();
        idleSince = idle ? (idleSince == Long.MIN_VALUE ? now : idleSince) : Long.MIN_VALUE;

        if (n < config.minReplicas()) {
            return change(now, n, config.minReplicas(), ScalingReason.MIN_REPLICAS, "below min_replicas");
        }
        if (n > config.maxReplicas()) {
            return change(now, n, config.maxReplicas(), ScalingReason.MAX_REPLICAS, "above max_replicas");
        }
        CapacityModel model = config.policy() == AutoscalingPolicy.ENVELOPE ? s.capacity() : null;
        if (model != null && model.capacity(Math.max(1, n)) <= 0) {
            // a profile on which the current replicas cannot meet the SLO at any rate (a cold or
            // starved container) says nothing about how many are needed: the signals decide
            model = null;
        }
        if (model != null) {
            int need = model.replicasFor(s.recentRate(), config.utilisation(), config.maxReplicas());
            if (need > n && n < config.maxReplicas()) {
                // at most doubled per tick: a profile distorted by new replicas' cold starts can
                // ask for many at once, and every start costs the machine CPU the others need
                int to = Math.min(Math.min(need, 2 * Math.max(1, n)), config.maxReplicas());
                return change(now, n, to, ScalingReason.ENVELOPE, String.format(
                        Locale.ROOT, "%.0f/s over %s exceeds %.0f/s planned for %d (%.0f %% of %.0f/s)",
                        s.recentRate(), seconds(s.recentWindow()), model.capacity(n) * config.utilisation(), n,
                        100 * config.utilisation(), model.capacity(n)));
            }
        }
        // a bad rate while the replicas sit idle is lost elsewhere (a starved gateway, a cold JVM):
        // more replicas would not serve it, so only busy replicas are added to
        boolean busy = Double.isNaN(s.idleFraction()) || s.idleFraction() < config.idleThreshold();
        if (badRate > config.badRateThreshold() && busy && n < config.maxReplicas() && s.ready() >= n
                && (lastUpAt == Long.MIN_VALUE || now - lastUpAt >= config.settleNanos())) {
            double r = Math.min(badRate, 0.9); // N·r/(1−r) grows without bound as r nears 1
            int add = Math.max(1, (int) Math.ceil(n * r / (1 - r)));
            return change(now, n, Math.min(config.maxReplicas(), n + add), ScalingReason.BAD_RATE, String.format(
                    Locale.ROOT, "bad rate %.1f %% above %.1f %%", 100 * badRate, 100 * config.badRateThreshold()));
        }
        if (idle && n > config.minReplicas() && now - idleSince >= config.cooldownNanos()
                && (lastChangeAt == Long.MIN_VALUE || now - lastChangeAt >= config.cooldownNanos())) {
            int to;
            String detail;
            if (model != null) {
                to = Math.max(config.minReplicas(), model.replicasFor(s.sustainedRate(),
                        config.utilisation() * DOWN_HEADROOM, config.maxReplicas()));
                detail = String.format(Locale.ROOT, "idle %.0f %% for %s; busiest %.0f/s of the cooldown needs %d",
                        100 * s.idleFraction(), seconds(now - idleSince), s.sustainedRate(), to);
            } else {
                to = Math.max(config.minReplicas(), n - (int) Math.floor(n * s.idleFraction()));
                detail = String.format(Locale.ROOT, "idle %.0f %% for %s", 100 * s.idleFraction(),
                        seconds(now - idleSince));
            }
            if (to < n) {
                return change(now, n, to, ScalingReason.IDLE, detail);
            }
        }
        return null;
    }

    private double badRate(ScalingSignals s) {
        long arrived = s.arrived() - prevArrived;
        long bad = s.bad() - prevBad;
        boolean first = prevArrived < 0;
        prevArrived = s.arrived();
        prevBad = s.bad();
        lastBadRate = first || arrived < MIN_QUERIES ? 0 : Math.min(1, Math.max(0, (double) bad / arrived));
        return lastBadRate;
    }

    private ScalingDecision change(long now, int from, int to, ScalingReason reason, String detail) {
        lastChangeAt = now;
        if (to > from) {
            lastUpAt = now;
        }
        idleSince = Long.MIN_VALUE;
        return new ScalingDecision(now, from, to, reason, detail);
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }
}
