package io.servegate.gateway.batching;

import io.servegate.core.batching.BatchingPolicy;
import io.servegate.core.batching.BatchLatencyProfile;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * The adaptive batching queue of ONE model-container replica (Clipper, NSDI'17, §4.3).
 *
 * <p>Queued tasks are ordered by deadline (earliest first, ties by arrival order) and are
 * dispatched in batches of at most {@link BatchingPolicy#maxBatchSize()}, with at most one batch
 * in flight: as in Clipper, the next batch is sent when the previous one returns, which is also
 * what makes each latency sample fed to the policy a clean measurement of a single batch.
 *
 * <p><b>Delayed batching</b> (§4.3.2): with {@code batchWaitNanos > 0}, a batch smaller than the
 * maximum is held back until the oldest queued task (by arrival) has waited
 * {@code batchWaitNanos}, giving more queries the chance to join it.
 *
 * <p><b>Deadline-aware dispatch</b> (Clockwork, OSDI'20, §4.3 and §5): with a
 * {@link BatchLatencyProfile}, the queue never starts a batch that it expects to finish after the
 * deadline of a task in it. Of the batch sizes up to the policy's maximum it picks the largest
 * {@code b} for which at least {@code b} queued tasks have {@code deadline >= now + estimate(b)}
 * (Clockwork prefers large batches for goodput), and sends the {@code b} earliest of them. Tasks
 * whose deadline comes before that are dropped through {@code onExpired} at once: with one batch
 * in flight they could only start after this one returns, later than their deadline, so their
 * callers may answer now rather than wait for the deadline. When no queued task can make it, the
 * one with the most slack is still sent alone rather than leave the replica idle: only completed
 * batches refresh the profile, so a replica judged too slow would otherwise never be measured
 * again until its samples aged out. Without samples the profile says nothing and batches are
 * formed as in Clipper.
 *
 * <p><b>Time</b> is passed in by the caller as {@code now} (nanoseconds on one monotonic clock,
 * e.g. {@link System#nanoTime()} or a simulator's virtual clock), so a reactive driver, a
 * discrete-event simulation and a benchmark can all drive the same code. Times are compared
 * directly; clock wrap-around is not handled. This class starts no threads and blocks on no I/O.
 *
 * <p><b>Thread-safe.</b> Mutations are {@code synchronized} with short critical sections;
 * user callbacks ({@code onExpired}) run outside the lock; {@link #size()}, {@link #load()} and
 * {@link #inFlight()} are lock-free reads so least-loaded routing never contends with dispatch.
 *
 * @param <T> the task type
 */
public final class BatchQueue<T> {

    /** A queued task; also a node of the arrival-order list (so "oldest" is O(1) to find). */
    private static final class Entry<T> {
        final T item;
        final long deadline;
        final long arrival;
        final long seq;
        Entry<T> prev;
        Entry<T> next;

        Entry(T item, long deadline, long arrival, long seq) {
            this.item = item;
            this.deadline = deadline;
            this.arrival = arrival;
            this.seq = seq;
        }
    }

    private static final Comparator<Entry<?>> EDF =
            Comparator.<Entry<?>>comparingLong(e -> e.deadline).thenComparingLong(e -> e.seq);

    private final BatchingPolicy policy;
    private final long batchWaitNanos;
    private final int capacity;
    private final BatchLatencyProfile profile;

    // Guarded by 'this'.
    private final PriorityQueue<Entry<T>> byDeadline = new PriorityQueue<>(EDF);
    // Intrusive doubly-linked list in arrival order. Tasks leave in deadline order, i.e. from
    // anywhere in this list, so O(1) unlinking keeps it exactly as large as the queue (a lazily
    // cleaned deque could grow without bound behind one long-deadline task).
    private Entry<T> oldest;
    private Entry<T> newest;
    private long nextSeq;

    // Written under the lock, read lock-free.
    private volatile Batch<T> inFlightBatch;
    private volatile int size;
    // One field, so a reader never sees a dispatched batch counted twice or not at all.
    private volatile int load;

    /**
     * @param policy         decides the maximum batch size and receives latency feedback
     * @param batchWaitNanos delayed-batching window in nanoseconds; {@code 0} disables it
     * @param capacity       maximum number of queued (not in-flight) tasks, {@code >= 1}
     * @throws IllegalArgumentException if {@code batchWaitNanos < 0} or {@code capacity < 1}
     * @throws NullPointerException     if {@code policy} is null
     */
    public BatchQueue(BatchingPolicy policy, long batchWaitNanos, int capacity) {
        this(policy, batchWaitNanos, capacity, null);
    }

    /**
     * A deadline-aware queue (see the class comment).
     *
     * @param profile the replica's latency profile, fed by {@link #complete}; {@code null}
     *                dispatches as Clipper does, ignoring how long a batch will take
     */
    public BatchQueue(BatchingPolicy policy, long batchWaitNanos, int capacity, BatchLatencyProfile profile) {
        this.profile = profile;
        this.policy = Objects.requireNonNull(policy, "policy");
        if (batchWaitNanos < 0) {
            throw new IllegalArgumentException("batchWaitNanos must be >= 0, got " + batchWaitNanos);
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        }
        this.batchWaitNanos = batchWaitNanos;
        this.capacity = capacity;
    }

    /**
     * Enqueues a task.
     *
     * <p>A task whose deadline has already passed is accepted and reported through
     * {@code onExpired} by the next {@link #tryDispatch}; it is never sent.
     *
     * @param item          the task, not null
     * @param deadlineNanos the task's deadline on the caller's clock
     * @param now           the current time; recorded as the task's arrival
     * @return {@code false} if the queue already holds {@code capacity} tasks (the caller must
     *         reject the task explicitly)
     */
    public boolean offer(T item, long deadlineNanos, long now) {
        Objects.requireNonNull(item, "item");
        synchronized (this) {
            if (byDeadline.size() >= capacity) {
                return false;
            }
            Entry<T> e = new Entry<>(item, deadlineNanos, now, nextSeq++);
            byDeadline.add(e);
            linkLast(e);
            publishCounts();
            return true;
        }
    }

    /**
     * Forms the next batch if one may be sent now.
     *
     * <p>If no batch is in flight, first removes every task whose deadline is {@code <= now} (and,
     * when deadline-aware, every task that cannot make its deadline, see the class comment) and
     * hands it to {@code onExpired} (outside the lock; it is never sent). Then, if tasks remain
     * and either the queue holds at least {@code maxBatchSize} tasks, delayed batching is off, or
     * the oldest task (by arrival) has waited at least {@code batchWaitNanos}, it removes up to
     * {@code maxBatchSize} tasks (when deadline-aware, the chosen size) in deadline order, marks
     * them in flight and returns them.
     *
     * <p>If {@code onExpired} throws, every expired task is still handed over, no batch is
     * formed, and the first exception is rethrown (later ones suppressed).
     *
     * @param now       the current time
     * @param onExpired receives each task dropped because its deadline passed
     * @return the batch to send, or {@code null} if none may be sent now
     */
    public Batch<T> tryDispatch(long now, Consumer<T> onExpired) {
        Objects.requireNonNull(onExpired, "onExpired");
        while (true) {
            List<T> expired;
            synchronized (this) {
                if (inFlightBatch != null) {
                    return null;
                }
                expired = removeExpired(now);
                if (expired == null) {
                    int max = currentMax();
                    if (!isReady(now, max)) {
                        return null;
                    }
                    long[] estimates = profile == null ? null
                            : profile.estimates(Math.min(max, byDeadline.size()), now);
                    if (estimates == null) {
                        return formBatch(now, max);
                    }
                    List<T> unreachable = new ArrayList<>();
                    int size = plan(now, estimates, unreachable);
                    if (unreachable.isEmpty()) {
                        return formBatch(now, size);
                    }
                    expired = unreachable;
                }
            }
            // Callbacks run unlocked (they may complete client responses synchronously), and
            // before any batch exists, so a throwing callback cannot strand an in-flight batch.
            // Then loop: tasks offered meanwhile may have expired too.
            handOver(expired, onExpired);
        }
    }

    /**
     * When the driver should call {@link #tryDispatch} again if nothing else happens (no offer,
     * no completion).
     *
     * @param now the current time
     * @return {@link Long#MAX_VALUE} if the queue is empty or a batch is in flight; {@code now} if
     *         {@code tryDispatch(now, ...)} would dispatch or drop tasks; otherwise the earlier of
     *         the end of the oldest task's batching window and the earliest deadline (so expired
     *         tasks are dropped promptly)
     */
    public synchronized long nextDispatchTime(long now) {
        if (inFlightBatch != null || byDeadline.isEmpty()) {
            return Long.MAX_VALUE;
        }
        long earliestDeadline = byDeadline.peek().deadline;
        if (profile != null) {
            // a task is dropped once even a batch of one could not return before its deadline
            long[] one = profile.estimates(1, now);
            earliestDeadline -= one == null ? 0 : one[1];
        }
        if (earliestDeadline <= now || isReady(now, currentMax())) {
            return now;
        }
        // Not ready implies batchWaitNanos > 0 and the window of the oldest task is still open.
        long windowEnd = saturatedAdd(oldest.arrival, batchWaitNanos);
        return Math.min(windowEnd, earliestDeadline);
    }

    /**
     * The in-flight batch returned successfully: feeds its latency
     * ({@code now - batch.dispatchedAt()}, clamped at 0) to the policy and clears the in-flight
     * mark.
     *
     * <p>A batch that is not the one in flight (a duplicate or stale completion, e.g. a timeout
     * racing with a late reply) is ignored, so it can neither feed the policy twice nor release
     * a newer batch's slot.
     *
     * @param batch the batch returned by {@link #tryDispatch}
     * @param now   the current time
     */
    public void complete(Batch<T> batch, long now) {
        complete(batch, now, now - batch.dispatchedAt());
    }

    /**
     * As {@link #complete(Batch, long)}, with the batch's latency measured elsewhere: e.g. the
     * service time the container reports, which unlike the round trip does not grow when the
     * gateway itself is short of CPU, so the policy learns the container's profile.
     *
     * @param latencyNanos the batch's latency, clamped at 0
     */
    public void complete(Batch<T> batch, long now, long latencyNanos) {
        Objects.requireNonNull(batch, "batch");
        synchronized (this) {
            if (batch != inFlightBatch) {
                return;
            }
            clearInFlight();
            if (profile != null) {
                // the round trip, not the container's own time: that is what a deadline waits for
                profile.record(batch.size(), Math.max(0L, now - batch.dispatchedAt()), now);
            }
            // Feedback is applied under the lock: the next batch, possibly formed by another
            // thread as soon as the slot is free, must be sized with this sample already applied.
            policy.onBatchCompleted(batch.size(), Math.max(0L, latencyNanos));
        }
    }

    /**
     * The in-flight batch failed (error, timeout, replica lost): clears the in-flight mark
     * without feeding the policy, since a failure says nothing about the latency profile. The
     * caller decides what happens to the batch's tasks. A batch that is not the one in flight is
     * ignored (see {@link #complete}).
     *
     * @param batch the batch returned by {@link #tryDispatch}
     * @param now   the current time (unused; kept for symmetry with {@link #complete})
     */
    public void fail(Batch<T> batch, long now) {
        Objects.requireNonNull(batch, "batch");
        synchronized (this) {
            if (batch == inFlightBatch) {
                clearInFlight();
            }
        }
    }

    /**
     * Removes and returns all queued tasks, earliest deadline first, e.g. when the replica is
     * removed or dead so the caller can re-route them or answer with a default. An in-flight
     * batch is not affected.
     *
     * @return a new list with the removed tasks
     */
    public synchronized List<T> drain() {
        List<T> all = new ArrayList<>(byDeadline.size());
        Entry<T> e;
        while ((e = byDeadline.poll()) != null) {
            all.add(e.item);
        }
        oldest = null;
        newest = null;
        publishCounts();
        return all;
    }

    /** Number of queued tasks, excluding an in-flight batch. Lock-free. */
    public int size() {
        return size;
    }

    /** Whether a batch is in flight. Lock-free. */
    public boolean inFlight() {
        return inFlightBatch != null;
    }

    /** Queued tasks plus the size of the in-flight batch: the replica's load for routing. */
    public int load() {
        return load;
    }

    /** The policy deciding this queue's maximum batch size. */
    public BatchingPolicy policy() {
        return policy;
    }

    /** The delayed-batching window in nanoseconds ({@code 0} = off). */
    public long batchWaitNanos() {
        return batchWaitNanos;
    }

    /** Maximum number of queued tasks. */
    public int capacity() {
        return capacity;
    }

    // ---- internals; all called with the lock held ----

    private int currentMax() {
        // Defensive: a misbehaving policy must not stall the queue with a size of 0.
        return Math.max(1, policy.maxBatchSize());
    }

    private boolean isReady(long now, int max) {
        return !byDeadline.isEmpty()
                && (byDeadline.size() >= max
                    || batchWaitNanos == 0
                    || now - oldest.arrival >= batchWaitNanos);
    }

    /** Removes tasks with deadline <= now; returns null (no allocation) when there are none. */
    private List<T> removeExpired(long now) {
        List<T> expired = null;
        Entry<T> head;
        while ((head = byDeadline.peek()) != null && head.deadline <= now) {
            byDeadline.poll();
            unlink(head);
            if (expired == null) {
                expired = new ArrayList<>();
            }
            expired.add(head.item);
        }
        if (expired != null) {
            publishCounts();
        }
        return expired;
    }

    /**
     * Plans a deadline-aware batch: finds the largest size {@code b} (up to
     * {@code estimates.length - 1}) with at least {@code b} tasks whose
     * {@code deadline >= now + estimates[b]}, then removes the tasks with an earlier deadline
     * into {@code unreachable}; a batch of one after another would start after they are due.
     * When no task can make its deadline, all but the one with the most slack are removed and it
     * is sent alone, as a probe of the profile.
     *
     * @return the size to send once {@code unreachable} is empty
     */
    private int plan(long now, long[] estimates, List<T> unreachable) {
        int top = estimates.length - 1;
        // Only tasks due before a full batch could return matter; they are few unless overloaded.
        List<Entry<T>> early = new ArrayList<>();
        Entry<T> head;
        while ((head = byDeadline.peek()) != null && head.deadline < now + estimates[top]) {
            early.add(byDeadline.poll());
        }
        int n = early.size() + byDeadline.size();
        int size = 0;
        int before = early.size(); // tasks due before now + estimates[b], for the b under test
        for (int b = top; b >= 1; b--) {
            while (before > 0 && early.get(before - 1).deadline >= now + estimates[b]) {
                before--;
            }
            if (n - before >= b) {
                size = b;
                break;
            }
        }
        if (size == 0) {
            // Nothing can make it: the replica would sit idle while its profile, which only
            // completed batches refresh, may be stale (a slow spell, one outlier). Send the task
            // with the most slack alone as a probe; its caller still gets the default at its
            // deadline if the profile was right.
            size = 1;
            before = early.size() - 1;
        }
        int drop = before;
        for (int i = 0; i < early.size(); i++) {
            Entry<T> e = early.get(i);
            if (i < drop) {
                unlink(e);
                unreachable.add(e.item);
            } else {
                byDeadline.add(e);
            }
        }
        if (drop > 0) {
            publishCounts();
        }
        return size;
    }

    private Batch<T> formBatch(long now, int max) {
        int n = Math.min(max, byDeadline.size());
        List<T> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Entry<T> e = byDeadline.poll();
            unlink(e);
            items.add(e.item);
        }
        Batch<T> batch = new Batch<>(items, now);
        inFlightBatch = batch;
        publishCounts();
        return batch;
    }

    private void clearInFlight() {
        inFlightBatch = null;
        publishCounts();
    }

    private void publishCounts() {
        int queued = byDeadline.size();
        Batch<T> b = inFlightBatch;
        size = queued;
        load = queued + (b == null ? 0 : b.size());
    }

    private void linkLast(Entry<T> e) {
        e.prev = newest;
        if (newest == null) {
            oldest = e;
        } else {
            newest.next = e;
        }
        newest = e;
    }

    private void unlink(Entry<T> e) {
        if (e.prev == null) {
            oldest = e.next;
        } else {
            e.prev.next = e.next;
        }
        if (e.next == null) {
            newest = e.prev;
        } else {
            e.next.prev = e.prev;
        }
        e.prev = null;
        e.next = null;
    }

    private static <T> void handOver(List<T> expired, Consumer<T> onExpired) {
        RuntimeException failure = null;
        for (T item : expired) {
            try {
                onExpired.accept(item);
            } catch (RuntimeException ex) {
                if (failure == null) {
                    failure = ex;
                } else {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        // Overflow iff both operands have the sign opposite to the result (b >= 0 here).
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
