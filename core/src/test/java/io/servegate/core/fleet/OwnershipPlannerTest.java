package io.servegate.core.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.fleet.OwnershipChange.Kind;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class OwnershipPlannerTest {

    private final OwnershipPlanner planner = new OwnershipPlanner(0.25, 1.0);

    private static Set<String> versions(int n) {
        Set<String> v = new LinkedHashSet<>();
        for (int i = 0; i < n; i++) {
            v.add("m" + i + ":1");
        }
        return v;
    }

    private static SortedSet<String> members(String... ids) {
        return new TreeSet<>(List.of(ids));
    }

    /** Applies a plan as the store would, completing every hand-off at once. */
    private static Map<String, Assignment> apply(Map<String, Assignment> current, List<OwnershipChange> plan) {
        Map<String, Assignment> next = new TreeMap<>(current);
        long epoch = current.values().stream().mapToLong(Assignment::epoch).max().orElse(0);
        for (OwnershipChange c : plan) {
            switch (c.kind()) {
                case DROP -> next.remove(c.version());
                case GRANT, HANDOFF -> next.put(c.version(), new Assignment(c.target(), ++epoch, ""));
            }
        }
        return next;
    }

    private static Map<String, Integer> counts(Map<String, Assignment> a) {
        Map<String, Integer> n = new TreeMap<>();
        a.values().forEach(x -> n.merge(x.owner(), 1, Integer::sum));
        return n;
    }

    private static long count(List<OwnershipChange> plan, Kind kind) {
        return plan.stream().filter(c -> c.kind() == kind).count();
    }

    @Test
    void aFirstMemberGetsEverythingByGrant() {
        List<OwnershipChange> plan = planner.plan(Map.of(), versions(5), members("a"), Map.of());
        assertThat(plan).hasSize(5).allMatch(c -> c.kind() == Kind.GRANT && c.target().equals("a"));
    }

    @Test
    void aJoiningMemberTakesOnlyWhatBalancesTheFleet() {
        Map<String, Assignment> three = apply(Map.of(), planner.plan(Map.of(), versions(12), members("a", "b", "c"),
                Map.of()));
        assertThat(counts(three)).containsExactlyInAnyOrderEntriesOf(Map.of("a", 4, "b", 4, "c", 4));

        List<OwnershipChange> join = planner.plan(three, versions(12), members("a", "b", "c", "d"), Map.of());
        // 12 versions over 4 members: d needs 3, one from each of the others; nothing else moves
        assertThat(join).hasSize(3).allMatch(c -> c.kind() == Kind.HANDOFF && c.target().equals("d"));
        assertThat(counts(apply(three, join))).containsExactlyInAnyOrderEntriesOf(
                Map.of("a", 3, "b", 3, "c", 3, "d", 3));
    }

    /**
     * The most-loaded member holds one version heavier than its gap to a member that joins (the
     * most popular model of a Zipf mix): the joiner still takes load, from the next most loaded,
     * until it is within tolerance, and nothing more moves.
     */
    @Test
    void aJoiningMemberTakesLoadEvenWhereTheHeaviestHoldsOneVersionTooHeavyToMove() {
        Map<String, Assignment> current = new TreeMap<>();
        Map<String, Double> rates = new TreeMap<>();
        current.put("hot:1", new Assignment("a", 1, ""));
        rates.put("hot:1", 100.0);
        for (int i = 0; i < 10; i++) {
            current.put("b" + i + ":1", new Assignment("b", 2 + i, ""));
            current.put("c" + i + ":1", new Assignment("c", 12 + i, ""));
            rates.put("b" + i + ":1", 10.0);
            rates.put("c" + i + ":1", 10.0);
        }
        List<OwnershipChange> join = planner.plan(current, current.keySet(), members("a", "b", "c", "d"), rates);
        // mean 75: d takes 60 (at least 0.75 × 75) from b and c alike; a's one version stays
        assertThat(join).hasSize(6).allMatch(c -> c.kind() == Kind.HANDOFF && c.target().equals("d")
                && !c.version().equals("hot:1"));
        assertThat(join.stream().filter(c -> c.version().startsWith("b"))).hasSize(3);
    }

    @Test
    void aLeavingMembersVersionsAreGrantedAndNothingElseMoves() {
        Map<String, Assignment> four = apply(Map.of(), planner.plan(Map.of(), versions(12),
                members("a", "b", "c", "d"), Map.of()));
        List<OwnershipChange> leave = planner.plan(four, versions(12), members("a", "b", "c"), Map.of());
        assertThat(leave).hasSize(3).allMatch(c -> c.kind() == Kind.GRANT && !c.target().equals("d"));
        assertThat(leave).extracting(OwnershipChange::version).allMatch(v -> four.get(v).owner().equals("d"));
        assertThat(counts(apply(four, leave))).containsExactlyInAnyOrderEntriesOf(Map.of("a", 4, "b", 4, "c", 4));
    }

    @Test
    void aDrainingMemberHandsEverythingOffToTheOthersWhileStillLive() {
        Map<String, Assignment> four = apply(Map.of(), planner.plan(Map.of(), versions(12),
                members("a", "b", "c", "d"), Map.of()));
        List<OwnershipChange> drain = planner.plan(four, versions(12), members("a", "b", "c", "d"), Set.of("d"),
                Map.of());
        // handed off, not granted: d schedules each until the member it goes to is ready for it
        assertThat(drain).hasSize(3).allMatch(c -> c.kind() == Kind.HANDOFF && !c.target().equals("d"));
        assertThat(drain).extracting(OwnershipChange::version).allMatch(v -> four.get(v).owner().equals("d"));
        Map<String, Assignment> after = apply(four, drain);
        assertThat(counts(after)).containsExactlyInAnyOrderEntriesOf(Map.of("a", 4, "b", 4, "c", 4));
        // nothing is balanced back onto it, and a version with no live owner is not granted to it
        Map<String, Assignment> orphaned = new TreeMap<>(after);
        orphaned.put("m0:1", new Assignment("gone", 99, ""));
        List<OwnershipChange> next = planner.plan(orphaned, versions(12), members("a", "b", "c", "d"), Set.of("d"),
                Map.of());
        assertThat(next).singleElement().satisfies(c -> {
            assertThat(c.kind()).isEqualTo(Kind.GRANT);
            assertThat(c.target()).isNotEqualTo("d");
        });
        assertThat(planner.plan(after, versions(12), members("a", "b", "c", "d"), Set.of("d"), Map.of())).isEmpty();
    }

    @Test
    void handOffsToADrainingMemberGoBackOrElsewhere() {
        Map<String, Assignment> now = new TreeMap<>();
        now.put("x:1", new Assignment("a", 1, "d")); // to the drainer: cancelled, a keeps it
        now.put("y:1", new Assignment("d", 2, "b", true)); // from the drainer to b: left to complete
        now.put("z:1", new Assignment("gone", 3, "d")); // dead owner, draining target: granted to a stayer
        now.put("w:1", new Assignment("d", 4, "e")); // from one drainer to another: redirected to a stayer
        List<OwnershipChange> plan = planner.plan(now, Set.of("x:1", "y:1", "z:1", "w:1"), members("a", "b", "d", "e"),
                Set.of("d", "e"), Map.of());
        assertThat(plan).hasSize(3).contains(new OwnershipChange("x:1", Kind.HANDOFF, "a"));
        assertThat(plan).filteredOn(c -> c.version().equals("z:1"))
                .singleElement().satisfies(c -> assertThat(c.kind()).isEqualTo(Kind.GRANT));
        assertThat(plan).filteredOn(c -> c.version().equals("w:1"))
                .singleElement().satisfies(c -> assertThat(c.kind()).isEqualTo(Kind.HANDOFF));
        assertThat(plan).allMatch(c -> Set.of("a", "b").contains(c.target()));
    }

    @Test
    void whenEveryMemberDrainsNothingMoves() {
        Map<String, Assignment> two = apply(Map.of(), planner.plan(Map.of(), versions(6), members("a", "b"),
                Map.of()));
        assertThat(planner.plan(two, versions(6), members("a", "b"), Set.of("a", "b"), Map.of())).isEmpty();
    }

    @Test
    void versionsAreBalancedByArrivalRateNotByCount() {
        Map<String, Double> rates = new HashMap<>();
        rates.put("hot:1", 600.0);
        for (int i = 0; i < 6; i++) {
            rates.put("cold" + i + ":1", 100.0);
        }
        Map<String, Assignment> plan = apply(Map.of(), planner.plan(Map.of(), rates.keySet(), members("a", "b"),
                rates));
        // 1,200 q/s: the hot version alone on one member, the six cold ones on the other
        String hotOwner = plan.get("hot:1").owner();
        assertThat(counts(plan).get(hotOwner)).isEqualTo(1);
        assertThat(plan.values()).filteredOn(a -> !a.owner().equals(hotOwner)).hasSize(6);
    }

    @Test
    void aBalancedFleetIsLeftAloneAndPlansAreDeterministic() {
        Map<String, Double> rates = Map.of("a:1", 300.0, "b:1", 200.0, "c:1", 150.0, "d:1", 90.0);
        Map<String, Assignment> now = apply(Map.of(), planner.plan(Map.of(), rates.keySet(), members("x", "y"),
                rates));
        assertThat(planner.plan(now, rates.keySet(), members("x", "y"), rates)).isEmpty();
        assertThat(planner.plan(Map.of(), rates.keySet(), members("x", "y"), rates))
                .isEqualTo(planner.plan(Map.of(), rates.keySet(), members("x", "y"), rates));
    }

    @Test
    void loadThatShiftsMovesTheFewestVersionsBackWithinTolerance() {
        Set<String> v = versions(8);
        Map<String, Assignment> now = apply(Map.of(), planner.plan(Map.of(), v, members("a", "b"), Map.of()));
        // every version a owns turns hot: a carries 4 × 50, b 4 × 1
        Map<String, Double> rates = new HashMap<>();
        now.forEach((version, a) -> rates.put(version, a.owner().equals("a") ? 50.0 : 1.0));
        List<OwnershipChange> plan = planner.plan(now, v, members("a", "b"), rates);
        // mean 102, limit 127.5: after one hot version moves a still carries 150, after two 100 (b 104)
        assertThat(plan).hasSize(2).allMatch(c -> c.kind() == Kind.HANDOFF && c.target().equals("b"));
    }

    @Test
    void handOffsInFlightAreNotMovedAgainAndDeadTargetsAreCancelled() {
        Map<String, Assignment> now = new TreeMap<>();
        now.put("x:1", new Assignment("a", 1, "b"));
        now.put("y:1", new Assignment("a", 2, "gone"));
        now.put("z:1", new Assignment("gone", 3, "b"));
        now.put("old:1", new Assignment("a", 4, ""));
        List<OwnershipChange> plan = planner.plan(now, Set.of("x:1", "y:1", "z:1"), members("a", "b"), Map.of());
        assertThat(plan).containsExactlyInAnyOrder(
                new OwnershipChange("old:1", Kind.DROP, ""),
                new OwnershipChange("y:1", Kind.HANDOFF, "a"),
                new OwnershipChange("z:1", Kind.GRANT, "b"));
    }

    @Test
    void noMembersMeansNoGrants() {
        assertThat(planner.plan(Map.of(), versions(3), members(), Map.of())).isEmpty();
    }
}
