package io.servegate.gateway.fleet;

import io.servegate.core.fleet.Assignment;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * The fleet as one heartbeat read it from Redis, in one atomic step.
 *
 * @param generation the counter plans compare-and-set against
 * @param members    the live members, sorted by name
 * @param addresses  member → the address other members forward its versions' queries to
 * @param rates      member → arrivals per second it saw, by {@code model:version}
 * @param owners     {@code model:version} → its assignment
 * @param draining   the live members that are shutting down, handing off what they own
 */
public record FleetState(long generation, SortedSet<String> members, Map<String, String> addresses,
        Map<String, Map<String, Double>> rates, Map<String, Assignment> owners, SortedSet<String> draining) {

    /** The versions' arrival rates summed over every member that saw them. */
    public Map<String, Double> totalRates() {
        Map<String, Double> total = new TreeMap<>();
        rates.values().forEach(r -> r.forEach((v, x) -> total.merge(v, x, Double::sum)));
        return total;
    }

    /** The versions a member owns (hand-offs away from it included), sorted. */
    public List<String> ownedBy(String member) {
        return owners.entrySet().stream().filter(e -> e.getValue().owner().equals(member)).map(Map.Entry::getKey)
                .sorted().toList();
    }
}
