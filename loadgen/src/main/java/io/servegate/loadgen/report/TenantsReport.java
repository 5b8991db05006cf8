package io.servegate.loadgen.report;

import io.servegate.core.scheduling.Priority;
import io.servegate.loadgen.harness.AppMetrics;
import io.servegate.sim.TenantMix;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The live tenants benchmark's figures: per app of a case, what the client saw (offered, in the
 * SLO, late, defaults) beside what the gateway counted (late, defaults by reason, shed, model
 * time), its share of the model time, its goodput against its goodput alone, and the checks of
 * issue #36's criteria that apply to the case (reported, never asserted).
 */
public final class TenantsReport {

    /** Critical apps answer at least this share in the SLO when the mix is over capacity. */
    static final double CRITICAL_IN_SLO = 0.95;
    /** An app's share of the model time is within this fraction of its weight's share. */
    static final double SHARE_TOLERANCE = 0.10;
    /** Below capacity, each app's goodput is at least this fraction of its goodput alone. */
    static final double OF_ALONE = 0.99;

    private TenantsReport() {
    }

    /**
     * One app's measured window.
     *
     * @param app           the app, its tier, weight and load
     * @param durationS     the window's seconds
     * @param sent          queries whose send time fell in the window (their answers are counted, whenever they came)
     * @param predictions   answers that were predictions (client's count)
     * @param goodput       predictions answered within the SLO (client's count)
     * @param late          answers, of either kind, later than the SLO plus the tolerance (client's count)
     * @param defaults      default answers by the gateway's explanation (client's count)
     * @param errors        failed queries (a 503 of a rejecting app among them)
     * @param gateway       the gateway's counts over the window; null if a scrape failed
     */
    public record AppRun(TenantMix.App app, double durationS, long sent, long predictions, long goodput, long late,
            Map<String, Long> defaults, long errors, AppMetrics gateway) {

        /** Share of the queries sent that were predicted within the SLO. */
        public double inSlo() {
            return sent == 0 ? 0 : (double) goodput / sent;
        }

        String name() {
            return app.tenant().app();
        }
    }

    /** One app's share of the model time of {@code mix}, from the gateway's counts; null where it has none. */
    static Double modelShare(List<AppRun> mix, AppRun run) {
        double total = 0;
        for (AppRun r : mix) {
            if (r.gateway() == null || r.gateway().modelSeconds() == null) {
                return null;
            }
            total += r.gateway().modelSeconds();
        }
        return total > 0 ? run.gateway().modelSeconds() / total : null;
    }

    /** Goodput in the mix over goodput alone; null without an alone run. */
    static Double ofAlone(AppRun mixed, AppRun alone) {
        return alone == null || alone.goodput() == 0 ? null : (mixed.goodput() / mixed.durationS())
                / (alone.goodput() / alone.durationS());
    }

    /** One app's row of the JSON report. */
    public static Map<String, Object> row(List<AppRun> mix, AppRun r, AppRun alone) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("app", r.name());
        m.put("priority", r.app().tenant().priority().wireName());
        m.put("weight", r.app().tenant().weight());
        m.put("load", r.app().load());
        m.put("offered_rps", r.sent() / r.durationS());
        m.put("in_slo_pct", 100 * r.inSlo());
        m.put("goodput_per_s", r.goodput() / r.durationS());
        m.put("predictions", r.predictions());
        m.put("late_client", r.late());
        m.put("defaults_client", r.defaults());
        m.put("errors", r.errors());
        m.put("gateway", r.gateway());
        m.put("model_time_share", modelShare(mix, r));
        if (alone != null) {
            m.put("in_slo_pct_alone", 100 * alone.inSlo());
            m.put("goodput_of_alone", ofAlone(r, alone));
        }
        return m;
    }

    /**
     * The criteria that apply to the mix: over capacity, each critical app ≥ 95 % in the SLO and
     * each sheddable app never answered late (client and gateway); apps all of one tier with unequal
     * weights, each app's model time share within 10 % of its weight's share; and each app with an
     * alone run (below capacity), goodput ≥ 99 % of alone.
     *
     * @param alone the apps' alone runs by name (may miss some)
     */
    public static List<Map<String, Object>> checks(List<AppRun> mix, Map<String, AppRun> alone) {
        List<Map<String, Object>> out = new ArrayList<>();
        double load = mix.stream().mapToDouble(r -> r.app().load()).sum();
        long tiers = mix.stream().map(r -> r.app().tenant().priority()).distinct().count();
        long weights = mix.stream().map(r -> r.app().tenant().weight()).distinct().count();
        int weightSum = mix.stream().mapToInt(r -> r.app().tenant().weight()).sum();
        for (AppRun r : mix) {
            Priority p = r.app().tenant().priority();
            if (load > 1 && p == Priority.CRITICAL) {
                out.add(check(r.name() + " (critical) in SLO ≥ 95 %", 100 * r.inSlo(), r.inSlo() >= CRITICAL_IN_SLO));
            }
            if (p == Priority.SHEDDABLE) {
                long gatewayLate = r.gateway() == null ? 0 : r.gateway().late();
                out.add(check(r.name() + " (sheddable) late answers, client + gateway = 0", r.late() + gatewayLate,
                        r.late() + gatewayLate == 0));
            }
            Double share = modelShare(mix, r);
            if (tiers == 1 && weights > 1 && share != null) {
                double expected = (double) r.app().tenant().weight() / weightSum;
                out.add(check(String.format(Locale.ROOT, "%s model time share within 10 %% of %.3f", r.name(),
                        expected), share, Math.abs(share - expected) <= SHARE_TOLERANCE * expected));
            }
            Double of = ofAlone(r, alone.get(r.name()));
            if (alone.containsKey(r.name())) {
                out.add(check(r.name() + " goodput ≥ 99 % of alone", of == null ? null : 100 * of,
                        of != null && of >= OF_ALONE));
            }
        }
        return out;
    }

    private static Map<String, Object> check(String criterion, Object value, boolean holds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("criterion", criterion);
        m.put("value", value);
        m.put("holds", holds);
        return m;
    }

    /** The printed table's header. */
    public static String header() {
        return String.format(Locale.ROOT, "%-11s %-8s %-9s %3s %5s %8s %7s %6s %6s %7s %6s %7s %8s", "case", "app",
                "tier", "w", "load", "offered", "in SLO", "late", "gwlate", "shed", "other", "model", "of alone");
    }

    /** One app's line of the printed table. */
    public static String line(String caseName, List<AppRun> mix, AppRun r, AppRun alone) {
        AppMetrics g = r.gateway();
        long shed = g == null ? 0 : g.shed();
        long otherDefaults = g == null ? 0 : g.defaults().entrySet().stream().filter(e -> !e.getKey().equals("shed"))
                .mapToLong(Map.Entry::getValue).sum();
        Double share = modelShare(mix, r);
        Double of = ofAlone(r, alone);
        return String.format(Locale.ROOT, "%-11s %-8s %-9s %3d %5.2f %8.1f %6.2f%% %6d %6s %7d %6d %7s %8s", caseName,
                r.name(), r.app().tenant().priority().wireName(), r.app().tenant().weight(), r.app().load(),
                r.sent() / r.durationS(), 100 * r.inSlo(), r.late(), g == null ? "?" : Long.toString(g.late()), shed,
                otherDefaults, share == null ? "?" : String.format(Locale.ROOT, "%.1f%%", 100 * share),
                of == null ? "" : String.format(Locale.ROOT, "%.1f%%", 100 * of));
    }
}
