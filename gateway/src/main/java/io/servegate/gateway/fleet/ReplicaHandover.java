package io.servegate.gateway.fleet;

import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The hand-offs of the versions this gateway's replica pool schedules. Before a member takes a
 * version it seeds its profiles with the owner's ({@link PublishedProfiles}). At the hand-off the
 * releasing member stops scheduling the version: its queued queries go after it to the new owner
 * (they fail here as moved, and the fleet's dispatcher routes them), and it leaves in Redis how
 * long each replica still runs its batches. The new owner plans those replicas busy until then
 * before it schedules anything, so that its first batches follow the old owner's on the replicas
 * instead of both members planning the replicas as free and each batch waiting behind the other's.
 */
final class ReplicaHandover implements Handover {

    private final PublishedProfiles profiles;
    private final RedisFleetStore store;
    private final ReplicaPool pool;

    ReplicaHandover(PublishedProfiles profiles, RedisFleetStore store, ReplicaPool pool) {
        this.profiles = profiles;
        this.store = store;
        this.pool = pool;
    }

    @Override
    public Set<String> prepare(Collection<String> versions) {
        return profiles.prepare(versions);
    }

    @Override
    public void publish(Collection<String> owned) {
        profiles.publish(owned);
    }

    @Override
    public void release(Collection<String> versions) {
        Map<String, Map<String, Long>> backlog = new HashMap<>();
        for (String v : versions) {
            String[] mv = Ownership.modelAndVersion(v);
            backlog.put(v, pool.handOver(mv[0], mv[1]));
        }
        store.publishBacklog(backlog);
    }

    @Override
    public void takeOver(Collection<String> versions) {
        store.takeBacklog(versions).forEach((v, replicas) -> {
            String[] mv = Ownership.modelAndVersion(v);
            pool.busyFor(mv[0], mv[1], replicas);
        });
    }
}
