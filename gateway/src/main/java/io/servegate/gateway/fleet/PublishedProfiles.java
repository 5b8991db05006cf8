package io.servegate.gateway.fleet;

import io.servegate.core.scheduling.ReplicaEstimate;
import io.servegate.gateway.dispatch.ProfileSharing;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Replica profiles shared through Redis: only the member that schedules a version profiles its
 * replicas ({@link #measures}), and it publishes its replicas' estimates at every heartbeat; a
 * member that takes a version over seeds its own profiles with them before it schedules the
 * version, rather than starting cold or sending the replicas profiling batches of its own.
 */
public final class PublishedProfiles implements ProfileSharing {

    private static final Logger LOG = LoggerFactory.getLogger(PublishedProfiles.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, ReplicaEstimate>> ESTIMATES = new TypeReference<>() {
    };

    private final CompletableFuture<Bound> bound = new CompletableFuture<>();

    /**
     * The membership that says who schedules what, the Redis the profiles live in, and the replicas
     * whose profiles are published and seeded.
     */
    private record Bound(FleetMember member, RedisFleetStore store, ReplicaPool pool) {
    }

    /** Binds the profiles to the membership; until then no version's replicas are measured. */
    void bind(FleetMember member, RedisFleetStore store, ReplicaPool pool) {
        bound.complete(new Bound(member, store, pool));
    }

    @Override
    public CompletableFuture<Boolean> measures(String model, String version) {
        return bound.thenCompose(b -> b.member().schedules(Ownership.key(model, version)));
    }

    /** Seeds this gateway's profiles of {@code versions} with those their owners published; {@link Handover#prepare}. */
    Set<String> prepare(Collection<String> versions) {
        Bound b = bound.join();
        Map<String, String> published = b.store().profiles(versions);
        Set<String> ready = new HashSet<>();
        for (String v : versions) {
            String[] mv = Ownership.modelAndVersion(v);
            if (b.pool().seed(mv[0], mv[1], decode(v, published.get(v)))) {
                ready.add(v);
            }
        }
        return ready;
    }

    /** Publishes this gateway's profiles of the versions it schedules; {@link Handover#publish}. */
    void publish(Collection<String> owned) {
        Bound b = bound.join();
        Map<String, String> out = new HashMap<>();
        for (String v : owned) {
            String[] mv = Ownership.modelAndVersion(v);
            Map<String, ReplicaEstimate> estimates = b.pool().estimates(mv[0], mv[1]);
            if (!estimates.isEmpty()) {
                out.put(v, JSON.writeValueAsString(estimates));
            }
        }
        b.store().publishProfiles(out);
    }

    private static Map<String, ReplicaEstimate> decode(String version, String stored) {
        if (stored == null) {
            return Map.of();
        }
        try {
            return JSON.readValue(stored, ESTIMATES);
        } catch (JacksonException e) {
            LOG.warn("the profile published for {} is unreadable; its replicas start cold here: {}", version,
                    e.getMessage());
            return Map.of();
        }
    }
}
