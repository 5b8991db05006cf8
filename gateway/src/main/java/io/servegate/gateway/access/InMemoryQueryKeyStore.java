package io.servegate.gateway.access;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;

/** Query keys in this process only (with the in-memory registry); lost on restart. */
public final class InMemoryQueryKeyStore implements QueryKeyStore {

    private final Map<String, Map<String, QueryKey>> byApp = new ConcurrentHashMap<>();

    @Override
    public Mono<Void> add(String app, QueryKey key) {
        return Mono.fromRunnable(() -> byApp.computeIfAbsent(app, a -> new ConcurrentHashMap<>()).put(key.id(), key));
    }

    @Override
    public Mono<Boolean> revoke(String app, String id) {
        return Mono.fromSupplier(() -> {
            Map<String, QueryKey> keys = byApp.get(app);
            return keys != null && keys.remove(id) != null;
        });
    }

    @Override
    public Mono<List<QueryKey>> keys(String app) {
        return Mono.fromSupplier(() -> {
            Map<String, QueryKey> keys = byApp.get(app);
            return keys == null ? List.<QueryKey>of() : List.copyOf(keys.values());
        });
    }

    @Override
    public Mono<Void> removeAll(String app) {
        return Mono.fromRunnable(() -> byApp.remove(app));
    }

    @Override
    public void close() {
        byApp.clear();
    }
}
