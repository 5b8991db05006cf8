package io.servegate.gateway.rollout;

import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutEvidence;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;

/** Rollouts of a gateway on the in-memory registry: they live as long as the process. */
public final class InMemoryRolloutStore implements RolloutStore {

    private final Map<String, Rollout> byModel = new ConcurrentHashMap<>();
    private final Map<String, Map<String, RolloutEvidence>> evidence = new ConcurrentHashMap<>();

    @Override
    public Mono<List<Rollout>> all() {
        return Mono.fromSupplier(() -> List.copyOf(byModel.values()));
    }

    @Override
    public Mono<Rollout> get(String model) {
        return Mono.fromSupplier(() -> byModel.get(model));
    }

    @Override
    public Mono<Boolean> replace(String model, Rollout expected, Rollout next) {
        return Mono.fromSupplier(() -> {
            boolean[] stored = new boolean[1];
            byModel.compute(model, (k, current) -> {
                stored[0] = Objects.equals(current, expected);
                return stored[0] ? next : current;
            });
            if (stored[0] && expected != null && !expected.id().equals(next.id())) {
                evidence.remove(expected.id());
            }
            return stored[0];
        });
    }

    @Override
    public Mono<Void> putEvidence(String rolloutId, String member, RolloutEvidence e) {
        return Mono.fromRunnable(() -> evidence.computeIfAbsent(rolloutId, k -> new ConcurrentHashMap<>())
                .put(member, e));
    }

    @Override
    public Mono<RolloutEvidence> evidence(String rolloutId) {
        return Mono.fromSupplier(() -> evidence.getOrDefault(rolloutId, Map.of()).values().stream()
                .reduce(RolloutEvidence.EMPTY, RolloutEvidence::plus));
    }

    /** Nothing to release. */
    @Override
    public void close() {
    }
}
