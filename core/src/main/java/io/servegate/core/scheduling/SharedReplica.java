package io.servegate.core.scheduling;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * A replica holding several model versions under a memory budget, as a {@link MultiModelScheduler}
 * sees it: which models it holds (least recently used first), the loads and batches sent to it
 * that have not returned, in the order it runs them (one at a time), and when it is predicted to
 * be free. Its {@link Replica} gives the one {@link Lane} its batches are bound to and its busy
 * time; that replica's profile mixes every model's samples, so only its transport overhead is read.
 */
final class SharedReplica {

    /** A load or batch sent and not yet returned: its model, when it was sent, its predicted duration. */
    private record Sent(Object action, String model, long sentAt, long nanos) {
    }

    final Replica replica;
    final Lane lane;
    /** Every replica's transport overheads: what this one is assumed to have until its own is measured. */
    private final ReplicaProfile pooled;
    final long budgetBytes;
    long usedBytes;
    /** Left the scheduler; kept until what was sent to it has been reported back. */
    boolean removed;
    /** When it was last sent a probe (a batch planned without an estimate too old to trust). */
    long probedAt = Long.MIN_VALUE;
    /** The models it holds (loaded, or with their load sent), in access order: least recently used first. */
    private final LinkedHashMap<String, ServedModel<?>> held = new LinkedHashMap<>(16, 0.75f, true);
    private final ArrayDeque<Sent> sent = new ArrayDeque<>();
    private int sentBatches;

    SharedReplica(Replica replica, long budgetBytes, ReplicaProfile pooled) {
        this.replica = replica;
        this.pooled = pooled;
        this.lane = replica.lanes.get(0);
        this.budgetBytes = budgetBytes;
    }

    String id() {
        return replica.id;
    }

    boolean available() {
        return replica.available;
    }

    long freeAt() {
        return lane.freeAt;
    }

    long overheadNanos() {
        return replica.profile.overheadKnown() ? replica.profile.overheadNanos() : pooled.overheadNanos();
    }

    /** Whether the overhead of {@link #overheadNanos} was measured within the sample age limit. */
    boolean overheadFresh(long now) {
        return replica.profile.overheadKnown() ? replica.profile.overheadFresh(now) : pooled.overheadFresh(now);
    }

    /** Batches sent that have not returned. */
    int outstandingBatches() {
        return sentBatches;
    }

    /** Nothing sent is outstanding. */
    boolean idle() {
        return sent.isEmpty();
    }

    boolean holds(String model) {
        return held.containsKey(model);
    }

    /** Marks {@code model} used now: last in the eviction order. */
    void touch(String model) {
        held.get(model);
    }

    /** Whether {@code model} could be loaded now once unpinned models are evicted. */
    boolean canMakeRoom(ServedModel<?> model) {
        long free = budgetBytes - usedBytes;
        for (ServedModel<?> m : held.values()) {
            if (free >= model.sizeBytes) {
                break;
            }
            if (!pinned(m.id)) {
                free += m.sizeBytes;
            }
        }
        return free >= model.sizeBytes;
    }

    /**
     * The models to evict, least recently used first, so that {@code model} fits; the caller
     * checked {@link #canMakeRoom}. They are no longer held when this returns.
     */
    List<ServedModel<?>> evictFor(ServedModel<?> model) {
        List<ServedModel<?>> victims = new ArrayList<>();
        long free = budgetBytes - usedBytes;
        for (ServedModel<?> m : held.values()) {
            if (free >= model.sizeBytes) {
                break;
            }
            if (!pinned(m.id)) {
                victims.add(m);
                free += m.sizeBytes;
            }
        }
        for (ServedModel<?> m : victims) {
            release(m);
        }
        return victims;
    }

    /** The model is held from now on (loaded at startup, or its load sent). */
    void hold(ServedModel<?> model) {
        if (held.putIfAbsent(model.id, model) == null) {
            usedBytes += model.sizeBytes;
        }
    }

    /** The model is no longer held; false if it was not. */
    boolean release(ServedModel<?> model) {
        if (held.remove(model.id) == null) {
            return false;
        }
        usedBytes -= model.sizeBytes;
        return true;
    }

    /** Models held, least recently used first. */
    List<String> heldModels() {
        return List.copyOf(held.keySet());
    }

    /** A load or batch was sent; the replica is then predicted free at {@code freeAt}. */
    void sent(Object action, String model, long sentAt, long nanos, long freeAt) {
        sent.addLast(new Sent(action, model, sentAt, nanos));
        if (action instanceof Batch<?>) {
            sentBatches++;
        }
        lane.freeAt = freeAt;
    }

    /**
     * A load or batch returned (or failed): the replica's predicted free time is worked out again
     * from what is still outstanding, the first of which started when the container finished this
     * one, half a transport overhead ago. False for an action it does not know (stale, duplicate).
     */
    boolean returned(Object action, long now) {
        if (!sent.removeIf(s -> s.action == action)) {
            return false;
        }
        if (action instanceof Batch<?>) {
            sentBatches--;
        }
        Sent next = sent.peekFirst();
        if (next == null) {
            lane.freeAt = now;
        } else {
            long half = overheadNanos() / 2;
            long finish = Math.max(now - half, next.sentAt + half);
            for (Sent s : sent) {
                finish += s.nanos;
            }
            lane.freeAt = Math.max(now, finish);
        }
        return true;
    }

    /** Whether a load or batch of {@code model} is outstanding: it must stay until that ran. */
    private boolean pinned(String model) {
        for (Sent s : sent) {
            if (s.model.equals(model)) {
                return true;
            }
        }
        return false;
    }
}
