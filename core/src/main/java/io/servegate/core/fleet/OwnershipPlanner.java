package io.servegate.core.fleet;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Decides which gateway schedules which model version (Symphony §4.5, §4.7: models partitioned
 * among schedulers by load). Pure and deterministic: the same inputs give the same plan, whichever
 * member computes it.
 *
 * <p>A version's weight is its arrival rate (queries per second, summed over the gateways that
 * saw it), at least {@code minWeight}, so that idle versions still spread by count. The plan
 * moves as little as it can:
 * <ol>
 *   <li>versions whose owner left are granted, heaviest first, each to the least-loaded member
 *       (greedy longest-processing-time);</li>
 *   <li>then, only while the most-loaded member carries more than {@code 1 + tolerance} times
 *       the mean or the least-loaded one less than {@code 1 - tolerance} times it, the heaviest
 *       version that still narrows the gap to the least-loaded member is handed over to it, from
 *       the most-loaded member that has one (from a member within tolerance only while the
 *       least-loaded one is under it). Each such move lowers the sum of squared loads, so the
 *       loop ends, and a member that joins takes only what brings the fleet back within
 *       tolerance, even where the most-loaded member holds one version too heavy to move.</li>
 * </ol>
 * Versions whose hand-off is in flight are not moved again.
 *
 * <p>A member that is draining (shutting down) takes nothing: each version it owns is handed off,
 * heaviest first, to the least-loaded member that stays, as an orphan would be granted, and a
 * hand-off in flight to it goes back to its owner (or, from a draining owner, elsewhere). Its owner
 * keeps scheduling a version until the member it goes to is ready for it, so a graceful leave leaves
 * no moment in which a version has no scheduler. When every member drains, none is treated as
 * draining: there is nowhere else for the versions to go.
 */
public final class OwnershipPlanner {

    private final double tolerance;
    private final double minWeight;

    /**
     * @param tolerance how far above the mean load a member may stay without versions moved off it
     *     (0.25: 25 %)
     * @param minWeight the weight of a version with fewer arrivals per second than this
     */
    public OwnershipPlanner(double tolerance, double minWeight) {
        if (!(tolerance >= 0) || !(minWeight > 0)) {
            throw new IllegalArgumentException("tolerance must be >= 0 and minWeight > 0");
        }
        this.tolerance = tolerance;
        this.minWeight = minWeight;
    }

    /**
     * The changes that take {@code current} to a balanced assignment of {@code versions} over
     * {@code members}.
     *
     * @param current  what the fleet store holds, version → assignment
     * @param versions every model version in the registry
     * @param members  the live members
     * @param rates    arrivals per second by version; a missing version counts {@code minWeight}
     */
    public List<OwnershipChange> plan(Map<String, Assignment> current, Set<String> versions,
            SortedSet<String> members, Map<String, Double> rates) {
        return plan(current, versions, members, Set.of(), rates);
    }

    /**
     * As {@link #plan(Map, Set, SortedSet, Map)}, with the members in {@code draining} handing
     * everything they own to the others and taking nothing.
     *
     * @param draining live members that are shutting down; names that are not live are ignored
     */
    public List<OwnershipChange> plan(Map<String, Assignment> current, Set<String> versions,
            SortedSet<String> members, Set<String> draining, Map<String, Double> rates) {
        List<OwnershipChange> changes = new ArrayList<>();
        for (String v : new TreeSet<>(current.keySet())) {
            if (!versions.contains(v)) {
                changes.add(new OwnershipChange(v, OwnershipChange.Kind.DROP, ""));
            }
        }
        if (members.isEmpty()) {
            return changes;
        }
        SortedSet<String> staying = new TreeSet<>(members);
        staying.removeAll(draining);
        if (staying.isEmpty()) {
            staying = members;
        }
        Map<String, Double> load = new TreeMap<>();
        staying.forEach(m -> load.put(m, 0.0));
        Map<String, List<String>> movable = new HashMap<>();
        staying.forEach(m -> movable.put(m, new ArrayList<>()));
        // versions to place: orphans are granted, those of a live member that drains are handed off
        List<String> homeless = new ArrayList<>();
        for (String v : new TreeSet<>(versions)) {
            Assignment a = current.get(v);
            if (a != null && members.contains(a.owner()) && !staying.contains(a.owner())
                    && !(a.handingOff() && staying.contains(a.pending()))) {
                homeless.add(v);
                continue;
            }
            String effective = effectiveOwner(a, members, staying, v, changes);
            if (effective == null) {
                homeless.add(v);
                continue;
            }
            load.merge(effective, weight(v, rates), Double::sum);
            if (!a.handingOff()) {
                movable.get(effective).add(v);
            }
        }
        homeless.sort(Comparator.<String>comparingDouble(v -> -weight(v, rates)).thenComparing(v -> v));
        for (String v : homeless) {
            String target = lightest(load);
            load.merge(target, weight(v, rates), Double::sum);
            Assignment a = current.get(v);
            boolean ownerLive = a != null && members.contains(a.owner());
            changes.add(new OwnershipChange(v, ownerLive ? OwnershipChange.Kind.HANDOFF : OwnershipChange.Kind.GRANT,
                    target));
        }
        balance(load, movable, rates, changes);
        return changes;
    }

    /**
     * The staying member that will own {@code v} once what is in flight completes, or null; adds
     * the change a dead or draining hand-off target, or a dead owner with a staying target, needs.
     * The owner, when live, is a staying member (the caller places a draining owner's versions).
     */
    private static String effectiveOwner(Assignment a, Set<String> members, Set<String> staying, String v,
            List<OwnershipChange> changes) {
        if (a == null) {
            return null;
        }
        boolean ownerLive = members.contains(a.owner());
        boolean pendingStays = a.handingOff() && staying.contains(a.pending());
        if (a.handingOff() && !pendingStays && ownerLive) {
            changes.add(new OwnershipChange(v, OwnershipChange.Kind.HANDOFF, a.owner()));
            return a.owner();
        }
        if (pendingStays && !ownerLive) {
            changes.add(new OwnershipChange(v, OwnershipChange.Kind.GRANT, a.pending()));
            return a.pending();
        }
        if (pendingStays) {
            return a.pending();
        }
        return ownerLive ? a.owner() : null;
    }

    private void balance(Map<String, Double> load, Map<String, List<String>> movable, Map<String, Double> rates,
            List<OwnershipChange> changes) {
        double mean = load.values().stream().mapToDouble(Double::doubleValue).sum() / load.size();
        while (true) {
            String light = lightest(load);
            boolean lightUnder = load.get(light) < mean * (1 - tolerance);
            // from the most-loaded member that has a version lighter than its gap to the lightest: the
            // heaviest may hold one version too heavy to move, and a member that joins still takes load
            String from = null;
            String best = null;
            for (String heavy : byLoadDescending(load)) {
                double gap = load.get(heavy) - load.get(light);
                if (gap <= 0 || !lightUnder && load.get(heavy) <= mean * (1 + tolerance)) {
                    break;
                }
                for (String v : movable.get(heavy)) {
                    double w = weight(v, rates);
                    if (w < gap && (best == null || w > weight(best, rates))) {
                        best = v;
                    }
                }
                if (best != null) {
                    from = heavy;
                    break;
                }
            }
            if (best == null) {
                return;
            }
            double w = weight(best, rates);
            movable.get(from).remove(best);
            load.merge(from, -w, Double::sum);
            load.merge(light, w, Double::sum);
            changes.add(new OwnershipChange(best, OwnershipChange.Kind.HANDOFF, light));
        }
    }

    /** The members, most-loaded first, ties by name. */
    private static List<String> byLoadDescending(Map<String, Double> load) {
        List<String> members = new ArrayList<>(load.keySet());
        members.sort(Comparator.<String>comparingDouble(m -> -load.get(m)).thenComparing(m -> m));
        return members;
    }

    private double weight(String v, Map<String, Double> rates) {
        return Math.max(minWeight, rates.getOrDefault(v, 0.0));
    }

    /** The least-loaded member, ties to the first by name. */
    private static String lightest(Map<String, Double> load) {
        String best = null;
        for (Map.Entry<String, Double> e : load.entrySet()) {
            if (best == null || e.getValue() < load.get(best)) {
                best = e.getKey();
            }
        }
        return best;
    }
}
