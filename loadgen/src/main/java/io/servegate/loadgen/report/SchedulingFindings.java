package io.servegate.loadgen.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The findings of a scheduling report: sentences that read its numbers. */
public final class SchedulingFindings {

    private SchedulingFindings() {
    }

    /** Sentences that read the numbers: per case, the policies against the optimum; lateness; CPU limits. */
    public static List<String> of(List<SchedulingReport.Run> runs, int cores) {
        List<String> out = new ArrayList<>();
        for (String c : SchedulingReport.distinct(runs, SchedulingReport.Run::caseName)) {
            List<SchedulingReport.Run> of = runs.stream().filter(r -> r.caseName().equals(c)).toList();
            SchedulingReport.Run first = of.get(0);
            StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%s (%s, %.0f/s offered, optimum %.0f/s):",
                    c, first.description(), first.offeredPerSec(), first.optimumPerSec()));
            List<String> met = new ArrayList<>();
            for (SchedulingReport.Run r : of) {
                sb.append(String.format(Locale.ROOT, " %s %.0f/s (%s of optimum, p99 %s ms);", r.policy(),
                        r.measurement().goodputPerSec(), SchedulingReport.fixed(r.goodputOfOptimum(), 2),
                        SchedulingReport.fixed(r.measurement().p99Ms(), 1)));
                if (r.targetOfOptimum() != null && r.goodputOfOptimum() != null
                        && r.goodputOfOptimum() >= r.targetOfOptimum()) {
                    met.add(r.policy());
                }
            }
            if (first.targetOfOptimum() != null) {
                sb.append(String.format(Locale.ROOT, " the target (≥ %.2f of optimum) is met by %s.",
                        first.targetOfOptimum(), met.isEmpty() ? "none" : String.join(", ", met)));
            }
            out.add(sb.toString());
        }
        for (String p : SchedulingReport.distinct(runs, SchedulingReport.Run::policy)) {
            List<SchedulingReport.Run> of = runs.stream().filter(r -> r.policy().equals(p)).toList();
            long late = of.stream().mapToLong(SchedulingReport.Run::lateAnswers).sum();
            long answers = of.stream().mapToLong(SchedulingReport.Run::answers).sum();
            long timers = of.stream().filter(r -> r.control() != null).mapToLong(r -> r.control().timers()).sum();
            long lateTimers = of.stream().filter(r -> r.control() != null).mapToLong(r -> r.control().over2Ms()).sum();
            if (answers > 0 && timers > 0) {
                double share = (double) late / answers;
                double control = (double) lateTimers / timers;
                out.add(String.format(Locale.ROOT, "%s, all cases: %.3f%% of answers later than SLO + 2 ms against "
                        + "%.3f%% of the bare-timer control's wake-ups later than 2 ms: %s (target ≤ 2x).", p,
                        100 * share, 100 * control, control > 0 ? SchedulingReport.fixed(share / control, 2) + "x"
                                : "the control had none"));
            }
        }
        List<String> saturated = new ArrayList<>();
        List<String> lagging = new ArrayList<>();
        for (SchedulingReport.Run r : runs) {
            SchedulingReport.Cores c = r.cores();
            if (c.machine() != null && c.machine() >= 0.9 * cores) {
                Double idle = r.meanIdleFraction();
                saturated.add(String.format(Locale.ROOT, "%s / %s (%.2f busy: gateway %s, load generator %s, "
                        + "containers %s, other processes %s; gateway CPU %s ms per query; replicas idle %s)",
                        r.policy(), r.caseName(), c.machine(), SchedulingReport.fixed(c.gateway(), 2), SchedulingReport.fixed(c.loadGenerator(), 2),
                        SchedulingReport.fixed(c.containers(), 2), SchedulingReport.fixed(c.others(), 2), SchedulingReport.fixed(r.measurement().gatewaySide() == null
                                ? null : r.measurement().gatewaySide().cpuMsPerQuery(), 3),
                        idle == null ? "-" : SchedulingReport.fixed(idle, 2)));
            }
            if (!r.loadKeptUp()) {
                lagging.add(String.format(Locale.ROOT, "%s / %s (%.0f/s sent, send lag p99 %s ms)", r.policy(),
                        r.caseName(), r.measurement().sentPerSec(), SchedulingReport.fixed(r.measurement().sendLagP99Ms(), 1)));
            }
        }
        if (!saturated.isEmpty()) {
            out.add(String.format(Locale.ROOT, "The machine's %d cores were at least 90%% busy in %d of %d runs; "
                    + "where replicas sit idle meanwhile and goodput falls short, the cores, not the replicas, are the "
                    + "limit: %s.", cores, saturated.size(), runs.size(), String.join("; ", saturated)));
        }
        if (!lagging.isEmpty()) {
            out.add("The load generator fell behind its schedule (under 97 % sent, or send lag p99 over 2 ms), so the "
                    + "load was burstier than scheduled; latencies still count from the schedule: "
                    + String.join("; ", lagging) + ".");
        }
        return out;
    }
}
