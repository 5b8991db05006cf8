package io.servegate.sim;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A fleet of {@code gateways} in front of a many-model scenario's models and replicas. Each model
 * version is owned by one gateway, chosen by the core's
 * {@link io.servegate.core.fleet.OwnershipPlanner} from the versions' arrival rates as the gateway
 * fleet chooses it; the replicas are dealt among the gateways by the load they own, and each
 * gateway schedules its own with one {@link io.servegate.core.scheduling.MultiModelScheduler}.
 * Queries arrive spread over the live gateways; one that arrives at a gateway other than its
 * model's owner is forwarded, which costs {@code hopMs} each way out of its deadline.
 *
 * @param models   the versions, replicas, arrivals and SLO, as one scheduler would serve them
 * @param gateways how many gateways
 * @param spread   how arrivals are spread over the live gateways
 * @param hopMs    one-way latency of a forward between two gateways
 * @param failGateway the gateway that stops at {@code failAtS} (its in-flight queries lost), or -1
 * @param failAtS  when it stops, seconds into the run
 * @param leaseS   how long after it stopped its versions are granted to live gateways (its lease
 *                 running out); queries for them are lost until then
 * @param joinAtS  when the last gateway joins the others, seconds into the run; negative: it is
 *                 there from the start
 */
public record FleetScenario(ManyModelScenario models, int gateways, Spread spread, double hopMs, int failGateway,
        double failAtS, double leaseS, double joinAtS) {

    /** How arrivals are spread over the live gateways, as a load balancer in front of them would. */
    public enum Spread {
        /** In turn. */
        ROUND_ROBIN,
        /** Uniformly at random, from the run's own random stream. */
        RANDOM;

        /** Lower-case name with dashes, as the command line spells it. */
        public String id() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /**
         * The spread spelled {@code id} (case-insensitive).
         *
         * @throws IllegalArgumentException naming the known ones when {@code id} is none of them
         */
        public static Spread of(String id) {
            for (Spread s : values()) {
                if (s.id().equalsIgnoreCase(id.trim())) {
                    return s;
                }
            }
            throw new IllegalArgumentException("unknown spread '" + id + "': expected round-robin or random");
        }
    }

    public FleetScenario {
        if (gateways < 1 || gateways > models.replicas()) {
            throw new IllegalArgumentException("need 1 <= gateways <= replicas: each gateway schedules at least "
                    + "one replica");
        }
        if (!(hopMs >= 0) || !(leaseS >= 0)) {
            throw new IllegalArgumentException("need forward latency >= 0 and lease >= 0");
        }
        if (failGateway >= gateways || (failGateway >= 0 && (gateways < 2 || !(failAtS >= 0)))) {
            throw new IllegalArgumentException("the failing gateway must be one of " + gateways + " (g0..g"
                    + (gateways - 1) + "), with another left to take over, failing at >= 0 s");
        }
        if (joinAtS >= 0 && (gateways < 2 || failGateway >= 0)) {
            throw new IllegalArgumentException("a join needs at least 2 gateways (the last one joins), and no failure "
                    + "in the same run");
        }
    }

    /** The gateway that joins during the run, or -1. */
    public int joining() {
        return joinAtS >= 0 ? gateways - 1 : -1;
    }

    /** A fleet with no failure. */
    public static FleetScenario of(ManyModelScenario models, int gateways, Spread spread, double hopMs) {
        return new FleetScenario(models, gateways, spread, hopMs, -1, 0, 0, -1);
    }

    /** This fleet with another forwarding latency. */
    public FleetScenario withHopMs(double ms) {
        return new FleetScenario(models, gateways, spread, ms, failGateway, failAtS, leaseS, joinAtS);
    }

    /** The name of gateway {@code g}. */
    static String gateway(int g) {
        return "g" + g;
    }

    /** What the run was asked for, as the reports print it: the models' settings and the fleet's. */
    public Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>(models.settings());
        s.put("placement", models.placement().id());
        s.put("rate", models.rate());
        s.put("gateways", gateways);
        s.put("spread", spread.id());
        s.put("forward_ms_each_way", hopMs);
        if (failGateway >= 0) {
            s.put("fail", gateway(failGateway) + "@" + failAtS + "s");
            s.put("lease_s", leaseS);
        }
        if (joinAtS >= 0) {
            s.put("join", gateway(joining()) + "@" + joinAtS + "s");
        }
        return s;
    }
}
