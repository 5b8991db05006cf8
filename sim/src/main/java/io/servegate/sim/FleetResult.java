package io.servegate.sim;

import io.servegate.core.scheduling.RejectReason;
import io.servegate.sim.report.Summary;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of one fleet run.
 *
 * @param scenario what was run
 * @param atGateways every query as the gateway it arrived at saw it: arrived, answered in time or
 *                   late (latency from its arrival there, forwards included)
 * @param owners what the owners' schedulers saw of the queries that reached them: defaults by
 *               reason, failures, batches
 * @param defaulted queries that reached an owner and got the default or were lost with a replica
 * @param lost queries for a version with no live owner, or forwarded to an owner that had stopped
 * @param forwarded queries that arrived at a gateway other than their version's owner
 * @param moves versions granted to another gateway after a gateway stopped
 * @param coldStarts queries that arrived when no replica of their owner held their model
 * @param loads models loaded, all replicas together
 * @param gateways each gateway at the end of the run
 * @param arrivedPerSecond queries by second of arrival
 * @param goodPerSecond queries answered in time, by second of arrival
 * @param busyNanos replica time spent loading and serving, all replicas together
 * @param wallNanos wall-clock time the run took
 */
public record FleetResult(FleetScenario scenario, ModelStats atGateways, ModelStats owners, long defaulted, long lost,
        long forwarded, long moves, long coldStarts, long loads, List<Gateway> gateways, long[] arrivedPerSecond,
        long[] goodPerSecond, long busyNanos, long wallNanos) {

    /**
     * One gateway at the end of a run.
     *
     * @param versions  the model versions it owns
     * @param replicas  the replicas it schedules
     * @param ownedRps  the arrival rate of its versions, as the planner weighs them
     * @param scheduled queries that reached its scheduler
     * @param good      of those, answered in time at the owner
     */
    public record Gateway(String name, boolean live, int versions, int replicas, double ownedRps, long scheduled,
            long good) {
    }

    /** Predictions that reached the gateway they arrived at in time, per second. */
    public double goodputRps() {
        return atGateways.good() / scenario.models().durationS();
    }

    /** Queries offered per second. */
    public double offeredRps() {
        return atGateways.arrived() / scenario.models().durationS();
    }

    /**
     * The share of the queries that arrived in the {@code seconds} whole seconds from {@code fromS}
     * that were not answered in time; NaN when none arrived.
     */
    public double lossShare(int fromS, int seconds) {
        long arrived = 0;
        long good = 0;
        for (int t = fromS; t < Math.min(fromS + seconds, arrivedPerSecond.length); t++) {
            arrived += arrivedPerSecond[t];
            good += goodPerSecond[t];
        }
        return arrived == 0 ? Double.NaN : 1 - (double) good / arrived;
    }

    /** The run's numbers, key names stable for tools. */
    public Map<String, Object> summary() {
        ModelStats s = atGateways;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("gateways", scenario.gateways());
        m.put("forward_ms_each_way", scenario.hopMs());
        m.put("offered_rps", Summary.round(offeredRps()));
        m.put("goodput_rps", Summary.round(goodputRps()));
        m.put("good_share", Summary.round(s.arrived() == 0 ? 0 : (double) s.good() / s.arrived()));
        m.put("arrived", s.arrived());
        m.put("good", s.good());
        m.put("late", s.late());
        m.put("defaulted", defaulted);
        m.put("lost_unowned", lost);
        Map<String, Object> defaults = new LinkedHashMap<>();
        for (RejectReason r : RejectReason.values()) {
            defaults.put(r.name().toLowerCase(Locale.ROOT), owners.defaults(r));
        }
        defaults.put("failed", owners.failed());
        m.put("owner_defaults", defaults);
        m.put("forwarded", forwarded);
        m.put("forwarded_share", Summary.round(s.arrived() == 0 ? 0 : (double) forwarded / s.arrived()));
        m.put("ownership_moves", moves);
        m.put("cold_starts", coldStarts);
        m.put("loads", loads);
        m.put("p50_ms", Summary.round(s.latencyMs(50)));
        m.put("p99_ms", Summary.round(s.latencyMs(99)));
        m.put("mean_batch", Summary.round(owners.meanBatchSize()));
        m.put("replica_busy_fraction", Summary.round(busyNanos / (scenario.models().durationS() * 1e9
                * scenario.models().replicas())));
        List<Map<String, Object>> perGateway = new ArrayList<>();
        for (Gateway g : gateways) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("gateway", g.name());
            row.put("live", g.live());
            row.put("versions", g.versions());
            row.put("replicas", g.replicas());
            row.put("owned_rps", Summary.round(g.ownedRps()));
            row.put("scheduled", g.scheduled());
            row.put("good", g.good());
            perGateway.add(row);
        }
        m.put("per_gateway", perGateway);
        if (scenario.joinAtS() >= 0) {
            m.put("loss_share_first_10s_after_join", Summary.round(lossShare((int) Math.ceil(scenario.joinAtS()), 10)));
        }
        if (scenario.failGateway() >= 0 || scenario.joinAtS() >= 0) {
            m.put("arrived_per_second", arrivedPerSecond);
            m.put("good_per_second", goodPerSecond);
        }
        m.put("wall_ms", Summary.round(wallNanos / 1e6));
        return m;
    }
}
