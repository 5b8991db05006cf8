package io.servegate.gateway.fleet;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.fleet.Assignment;
import io.servegate.core.fleet.OwnershipChange;
import io.servegate.core.fleet.OwnershipPlanner;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This gateway's membership in the fleet of gateways that share a Redis registry, and its view
 * of who owns which model version.
 *
 * <p>Every heartbeat renews its lease in Redis and reads the fleet. The member first in name
 * order plans: orphaned versions granted, load rebalanced ({@link OwnershipPlanner}), applied all
 * or nothing against the generation it read, so two members that both believe they plan cannot
 * both write.
 *
 * <p>Exclusivity: this gateway schedules a version only while its lease is valid by its own
 * clock, and that lease ends ({@link #safety} early) before Redis's, which was started no earlier
 * than the heartbeat was sent. A version is granted to another member only after the owner's
 * lease ran out in Redis, or handed off after the owner released it, and the owner stops
 * scheduling it before the heartbeat that releases it is sent ({@link Handover#release}: what it
 * had queued goes after the version, and the new owner, {@link Handover#takeOver}, plans the
 * replicas busy with the batches the old one still runs there). An owner releases a version only
 * once the member it goes to has said it is ready for it ({@link Handover#prepare}: the profiles
 * published for it are loaded, its replicas warmed up), so the old owner schedules it until then;
 * a version granted (its owner gone) is prepared before its first query is scheduled here. A member whose lease ran out
 * (a partition, a pause) is fenced: Redis refuses its heartbeats and plans, and it rejoins under
 * a new name, owning nothing until granted again at a new epoch.
 *
 * <p>A member that shuts down first drains ({@link #drain}): it is given nothing more and hands
 * off what it owns in the same way, so the others take its versions over without a moment in which
 * one has no scheduler; once it has left it forwards what still reaches it to their new owners.
 *
 * <p>One exception trades exclusivity for availability: a member that was alone in the fleet when
 * it lost Redis keeps scheduling its versions past its lease, since no other member could have been
 * granted them by a heartbeat it saw. A gateway started beside it while Redis is out of reach of the
 * first would schedule the same versions until the first gets through and learns it was fenced.
 */
public final class FleetMember implements Ownership, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FleetMember.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * Load moves at most once per this many heartbeats: rates read over a heartbeat are noisy, and
     * every hand-off sends a version's queries through one more hop for a heartbeat or two.
     * Orphans are granted at once.
     */
    private static final int BALANCE_EVERY = 10;
    /** Heartbeats asked for by {@link #refresh()} begin at least this far apart. */
    private static final long REFRESH_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /** What the member knew after its last heartbeat. */
    private record View(String self, FleetState state, long leaseEndNanos, Set<String> released) {
        static final View NONE = new View("", null, Long.MIN_VALUE, Set.of());

        /**
         * What a member that left under the name {@code self} still knows: who owns what, to forward
         * to, with itself gone from the fleet (so it schedules nothing and forwards nothing to itself).
         */
        static View left(String self, FleetState state) {
            if (state == null) {
                return NONE;
            }
            SortedSet<String> members = new TreeSet<>(state.members());
            members.remove(self);
            Map<String, String> addresses = new HashMap<>(state.addresses());
            addresses.remove(self);
            return new View("", new FleetState(state.generation(), members, addresses, state.rates(), state.owners(),
                    state.draining()), Long.MIN_VALUE, Set.of());
        }
    }

    private final RedisFleetStore store;
    private final String name;
    private final String address;
    private final Duration period;
    private final Duration lease;
    private final long safetyNanos;
    private final OwnershipPlanner planner;
    private final Supplier<Set<String>> versions;
    private final Supplier<Map<String, Double>> rates;
    private final LongSupplier clock;
    private final Consumer<FleetState> onState;
    private final Handover handover;
    private final Counter gained;
    private final Counter lost;
    private final Counter fenced;
    private ScheduledExecutorService timer;

    private long lastBalanceNanos;
    private volatile String id;
    private volatile View view = View.NONE;
    private volatile CompletableFuture<Void> beaten = new CompletableFuture<>();
    private boolean joining = true;
    private volatile boolean draining;
    /** Versions being handed to this member that it is ready for, said at its next heartbeat; guarded by {@code this}. */
    private Set<String> readyFor = Set.of();
    private final Object refreshLock = new Object();
    /** The refresh asked for and not yet begun; guarded by {@link #refreshLock}. */
    private CompletableFuture<Void> refreshing;
    private long lastRefreshNanos;

    /**
     * @param name     this gateway's name in the fleet; each (re)join adds a random suffix
     * @param address  where the other members forward queries for this gateway's versions
     * @param period   time between heartbeats
     * @param lease    how long a heartbeat keeps the membership (and its versions) alive
     * @param versions every model version in the registry, as {@code model:version}
     * @param rates    arrivals per second this gateway saw, by version
     * @param onState  told the fleet after every heartbeat (on the heartbeat thread; it must not block)
     * @param handover prepares versions before they are scheduled here, and publishes what their next owner needs
     */
    FleetMember(RedisFleetStore store, String name, String address, Duration period, Duration lease,
            OwnershipPlanner planner, Supplier<Set<String>> versions, Supplier<Map<String, Double>> rates,
            LongSupplier clock, MeterRegistry meters, Consumer<FleetState> onState, Handover handover) {
        if (lease.compareTo(period.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException("servegate.fleet.lease must be at least twice the heartbeat period");
        }
        this.store = store;
        this.name = name;
        this.address = address;
        this.period = period;
        this.lease = lease;
        this.safetyNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(10), lease.toNanos() / 10);
        this.planner = planner;
        this.versions = versions;
        this.rates = rates;
        this.clock = clock;
        this.onState = onState;
        this.handover = handover;
        this.id = newId();
        this.lastBalanceNanos = clock.getAsLong() - period.toNanos() * BALANCE_EVERY;
        this.lastRefreshNanos = clock.getAsLong() - REFRESH_GAP_NANOS;
        this.gained = Counter.builder("servegate.fleet.ownership.moves").tag("direction", "gained")
                .description("Model versions this gateway started scheduling").register(meters);
        this.lost = Counter.builder("servegate.fleet.ownership.moves").tag("direction", "lost")
                .description("Model versions this gateway stopped scheduling").register(meters);
        this.fenced = Counter.builder("servegate.fleet.lease.expired")
                .description("Times this gateway's lease ran out and it rejoined the fleet").register(meters);
        Gauge.builder("servegate.fleet.owned.versions", this, m -> m.owned().size())
                .description("Model versions this gateway schedules").register(meters);
        Gauge.builder("servegate.fleet.members", this, m -> m.view.state == null ? 0 : m.view.state.members().size())
                .description("Live gateways in the fleet, as the last heartbeat read it").register(meters);
    }

    /**
     * Joins now (or, with Redis out of reach, at the first heartbeat that gets through) and then
     * beats every {@code period} on a thread of its own.
     */
    public FleetMember start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "servegate-fleet");
            t.setDaemon(true);
            return t;
        });
        beatLogged();
        timer.scheduleWithFixedDelay(this::beatLogged, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    private void beatLogged() {
        try {
            beat();
        } catch (RuntimeException e) {
            LOG.warn("fleet heartbeat of {} failed (its versions stay its own until its lease ends): {}", id,
                    e.toString());
        }
    }

    /**
     * One heartbeat: releases what is being handed off to a member ready for it, says which hand-offs
     * to it this member is ready for, renews the lease, reads the fleet, prepares what comes to it,
     * plans if first (and removes the profiles published for versions no longer in the registry), and publishes what the next owners of its versions need.
     */
    synchronized void beat() {
        View before = view;
        Set<String> releases = before.state == null ? Set.of() : Set.copyOf(before.state.owners().entrySet().stream()
                .filter(e -> e.getValue().owner().equals(before.self) && e.getValue().pendingReady())
                .map(Map.Entry::getKey).toList());
        if (!releases.isEmpty()) {
            // stop scheduling them before Redis hands them on: new queries go to the member they go to,
            // queued ones after them once this heartbeat is through
            view = new View(before.self, before.state, before.leaseEndNanos, releases);
            try {
                handover.release(releases);
            } catch (RuntimeException e) {
                LOG.warn("handing over {} failed: {}", releases, e.toString());
            }
        }
        String self = id;
        long sent = clock.getAsLong();
        Optional<FleetState> read = store.heartbeat(self, address, lease, rates.get(), mode(), releases, readyFor);
        if (read.isEmpty()) {
            fenced.increment();
            lost.increment(owned().size());
            view = View.NONE;
            readyFor = Set.of();
            id = newId();
            joining = true;
            LOG.warn("fleet lease of {} ran out; rejoining as {}", self, id);
            return;
        }
        joining = false;
        List<String> had = owned();
        FleetState state = read.get();
        boolean newlyReady = prepare(self, state, had);
        List<String> has = state.ownedBy(self); // what owned() says once the view below is set
        List<String> coming = has.stream().filter(v -> !had.contains(v)).toList();
        if (!coming.isEmpty()) {
            try {
                handover.takeOver(coming); // before the view that makes them this member's to schedule
            } catch (RuntimeException e) {
                LOG.warn("reading what the last owners of {} still run failed: {}", coming, e.toString());
            }
        }
        view = new View(self, state, sent + lease.toNanos() - safetyNanos, Set.of());
        gained.increment(coming.size());
        lost.increment(had.stream().filter(v -> !has.contains(v)).count());
        onState.accept(state);
        CompletableFuture<Void> done = beaten;
        beaten = new CompletableFuture<>();
        done.complete(null);
        // a draining member plans too: its own hand-offs then wait for no one else's heartbeat
        if (!state.members().isEmpty() && (state.members().first().equals(self) || draining)) {
            Set<String> existing = versions.get();
            List<OwnershipChange> plan = planner.plan(state.owners(), existing, state.members(), state.draining(),
                    state.totalRates());
            long now = clock.getAsLong();
            boolean mayBalance = now - lastBalanceNanos >= period.toNanos() * BALANCE_EVERY;
            if (!mayBalance) {
                plan = plan.stream().filter(c -> !balancing(c, state)).toList();
            } else if (plan.stream().anyMatch(c -> balancing(c, state))) {
                lastBalanceNanos = now;
            }
            if (!plan.isEmpty()) {
                RedisFleetStore.ApplyResult result = store.apply(self, state.generation(), plan);
                LOG.debug("fleet plan by {} of {} changes: {}", self, plan.size(), result);
                if (result == RedisFleetStore.ApplyResult.OK) {
                    beatSoon(); // read back what was just written, rather than a period later
                }
            }
            // an owner may publish a version's profiles after the version left the registry: swept every plan
            store.forgetProfilesExcept(existing);
        }
        try {
            handover.publish(has);
        } catch (RuntimeException e) {
            LOG.warn("publishing what {} learned of its versions failed: {}", self, e.toString());
        }
        if (newlyReady) {
            beatSoon(); // say so now: the old owner hands the versions on only then
        }
    }

    /**
     * Prepares what comes to this member in {@code state}: versions granted to it since it owned
     * {@code had}, before it schedules them, and those being handed to it, until it is ready for
     * them. Whether it became ready for a hand-off it has not said it is ready for yet.
     */
    private boolean prepare(String self, FleetState state, List<String> had) {
        Set<String> incoming = new HashSet<>();
        state.owners().forEach((v, a) -> {
            if (a.pending().equals(self) && !a.pendingReady()) {
                incoming.add(v);
            }
        });
        Set<String> toPrepare = new HashSet<>(state.ownedBy(self));
        toPrepare.removeAll(had);
        incoming.stream().filter(v -> !readyFor.contains(v)).forEach(toPrepare::add);
        Set<String> ready = Set.of();
        if (!toPrepare.isEmpty()) {
            try {
                ready = handover.prepare(toPrepare);
            } catch (RuntimeException e) {
                LOG.warn("fleet member {} could not load what its new versions need; granted ones start cold, "
                        + "hand-offs wait: {}", self, e.toString());
            }
        }
        Set<String> next = new HashSet<>(readyFor);
        next.addAll(ready);
        next.retainAll(incoming);
        boolean newlyReady = !readyFor.containsAll(next);
        readyFor = Set.copyOf(next);
        return newlyReady;
    }

    /** Completes with whether this member schedules the version, once the version has an owner. */
    CompletableFuture<Boolean> schedules(String key) {
        View v = view;
        Assignment a = v.state == null ? null : v.state.owners().get(key);
        return a != null ? CompletableFuture.completedFuture(a.owner().equals(v.self))
                : nextBeat().thenCompose(ignored -> schedules(key));
    }

    /** Beats now, off the caller's thread (the registry changed: a new version wants an owner). */
    public void beatSoon() {
        ScheduledExecutorService t = timer;
        if (t != null && !t.isShutdown()) {
            t.execute(this::beatLogged);
        }
    }

    @Override
    public CompletableFuture<Void> nextBeat() {
        return beaten;
    }

    /** A hand-off of a version from its live owner to another member: load balancing, not repair nor a drain. */
    private static boolean balancing(OwnershipChange c, FleetState state) {
        Assignment a = state.owners().get(c.version());
        return c.kind() == OwnershipChange.Kind.HANDOFF && a != null && !c.target().equals(a.owner())
                && !state.draining().contains(a.owner());
    }

    private RedisFleetStore.Beat mode() {
        return joining ? RedisFleetStore.Beat.JOIN : draining ? RedisFleetStore.Beat.DRAIN : RedisFleetStore.Beat.BEAT;
    }

    /**
     * Hands every version this member schedules to the others, before it leaves: from its next
     * heartbeat on it is marked draining, so that it is given nothing and its versions are handed
     * off, each scheduled here until the member it goes to is ready for it; it beats every tenth of
     * a period meanwhile, until it owns nothing, no other member is left to take over, or {@code
     * timeout} has passed. What it still owns then is granted to the others once it has left, as
     * after a crash.
     *
     * @return whether it owns nothing now
     */
    public boolean drain(Duration timeout) {
        if (view.state == null) {
            return true; // never joined, or fenced: nothing to hand off
        }
        startDraining();
        long end = clock.getAsLong() + timeout.toNanos();
        long gap = Math.max(5, period.toMillis() / 10);
        try {
            while (true) {
                beatLogged();
                if (owned().isEmpty() || alone() || clock.getAsLong() - end >= 0) {
                    return owned().isEmpty();
                }
                Thread.sleep(gap);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return owned().isEmpty();
        }
    }

    /** Whether no other live member stays to take this one's versions, as the last heartbeat read the fleet. */
    public boolean alone() {
        View v = view;
        return v.state == null
                || v.state.members().stream().allMatch(m -> m.equals(v.self) || v.state.draining().contains(m));
    }

    /** Marks this member draining from its next heartbeat on ({@link #drain} without the waiting). */
    void startDraining() {
        draining = true;
    }

    /**
     * Leaves the fleet at once: stops scheduling, then ends the lease, so the others take over
     * what it still owns. It keeps its last view of who owns what, to forward the queries that still
     * reach it until it stops answering.
     */
    public synchronized void leave() {
        String self = id;
        View last = view;
        view = View.left(self, last.state);
        store.heartbeat(self, address, Duration.ZERO, Map.of(), mode(), List.of(), List.of())
                .ifPresent(state -> view = View.left(self, state));
    }

    @Override
    public String self() {
        return id;
    }

    @Override
    public Route route(String model, String version) {
        View v = view;
        String key = Ownership.key(model, version);
        if (v.state == null) {
            return new Route.Unowned("this gateway has not joined the fleet (Redis unreachable?)");
        }
        Assignment a = v.state.owners().get(key);
        if (a == null) {
            return new Route.Unowned("no gateway owns " + key + " yet");
        }
        if (!a.owner().equals(v.self)) {
            String to = v.state.addresses().get(a.owner());
            return to == null ? new Route.Unowned("owner " + a.owner() + " of " + key + " left the fleet")
                    : new Route.Remote(a.owner(), to, a.epoch());
        }
        if (clock.getAsLong() - v.leaseEndNanos >= 0) {
            // Redis out of reach: a gateway that was alone keeps serving (no other member was there to
            // take over when it lost touch); in a fleet its versions go to the members that still reach it
            return v.state.members().size() == 1 ? new Route.Local(a.epoch())
                    : new Route.Unowned("this gateway's fleet lease ran out (Redis unreachable?)");
        }
        if (v.released.contains(key)) {
            // released, and the heartbeat that hands it on is in flight
            String to = v.state.addresses().get(a.pending());
            return to == null ? new Route.Unowned(key + " is being handed to " + a.pending() + ", which left")
                    : new Route.Remote(a.pending(), to, a.epoch());
        }
        return new Route.Local(a.epoch());
    }

    @Override
    public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
        if (owns(model, version)) {
            return CompletableFuture.completedFuture(true);
        }
        View v = view;
        Assignment a = v.state == null ? null : v.state.owners().get(Ownership.key(model, version));
        boolean newer = v.state != null && claim.owner().equals(v.self) && (a == null || claim.epoch() >= a.epoch());
        return newer ? refresh().thenApply(x -> owns(model, version)) : CompletableFuture.completedFuture(false);
    }

    /**
     * Beats soon, off the caller's thread: at once, or {@link #REFRESH_GAP_NANOS} after the last
     * refresh began, so that claims naming this gateway (true or forged) cost Redis at most one
     * extra heartbeat per gap. Requests that arrive before it begins share it. A member that was
     * not {@link #start() started} (its beats driven by hand) refreshes at its next beat.
     */
    @Override
    public CompletableFuture<Void> refresh() {
        ScheduledExecutorService t = timer;
        if (t == null) {
            return beaten;
        }
        synchronized (refreshLock) {
            if (refreshing != null) {
                return refreshing;
            }
            CompletableFuture<Void> next = new CompletableFuture<>();
            long delay = Math.max(0, lastRefreshNanos + REFRESH_GAP_NANOS - clock.getAsLong());
            try {
                t.schedule(() -> {
                    synchronized (refreshLock) {
                        refreshing = null;
                        lastRefreshNanos = clock.getAsLong();
                    }
                    try {
                        beatLogged();
                    } finally {
                        next.complete(null);
                    }
                }, delay, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                next.complete(null);
                return next;
            }
            refreshing = next;
            return next;
        }
    }

    /** The versions this gateway schedules now, sorted. */
    public List<String> owned() {
        View v = view;
        if (v.state == null) {
            return List.of();
        }
        return v.state.ownedBy(v.self).stream().filter(k -> !v.released.contains(k)).toList();
    }

    /** The fleet as the last heartbeat read it; null before the first. */
    public FleetState state() {
        return view.state;
    }

    private String newId() {
        byte[] suffix = new byte[3];
        RANDOM.nextBytes(suffix);
        return name + "-" + HexFormat.of().formatHex(suffix);
    }

    /**
     * Stops beating, letting a heartbeat under way finish (a second at most); the lease runs out on
     * its own unless {@link #leave()} ended it first.
     */
    @Override
    public void close() {
        if (timer == null) {
            return;
        }
        timer.shutdown();
        try {
            if (!timer.awaitTermination(1, TimeUnit.SECONDS)) {
                timer.shutdownNow();
            }
        } catch (InterruptedException e) {
            timer.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
