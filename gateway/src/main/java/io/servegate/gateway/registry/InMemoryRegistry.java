package io.servegate.gateway.registry;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The embedded, single-instance registry (the default): state lives only in this JVM.
 *
 * <p>Writes are serialized by a lock; each builds a new {@link RegistrySnapshot} that is swapped
 * in atomically (a volatile field), after which listeners are notified on the writing thread,
 * outside the write lock. A write's {@link Mono} does its work on the subscribing thread when
 * subscribed; it is pure in-memory work that never waits on I/O.
 */
public final class InMemoryRegistry implements Registry {

    private static final Logger log = LoggerFactory.getLogger(InMemoryRegistry.class);

    private final Object writeLock = new Object();
    private final Object notifyLock = new Object();
    private final List<Consumer<RegistrySnapshot>> listeners = new CopyOnWriteArrayList<>();
    private volatile RegistrySnapshot snapshot = RegistrySnapshot.empty();
    // guarded by notifyLock
    private long notifiedRevision;

    /** Creates an empty registry. */
    public InMemoryRegistry() {
    }

    @Override
    public RegistrySnapshot snapshot() {
        return snapshot;
    }

    @Override
    public Mono<Void> addApp(Application app) {
        return write(s -> s.addApp(app));
    }

    @Override
    public Mono<Void> deleteApp(String name) {
        return write(s -> s.deleteApp(name));
    }

    @Override
    public Mono<Void> addPipeline(Pipeline pipeline) {
        return write(s -> s.addPipeline(pipeline));
    }

    @Override
    public Mono<Void> deletePipeline(String name) {
        return write(s -> s.deletePipeline(name));
    }

    @Override
    public Mono<Void> addModel(ModelVersion model) {
        return write(s -> s.addModel(model));
    }

    @Override
    public Mono<Void> setModelVersion(String name, String version) {
        return write(s -> s.setModelVersion(name, version));
    }

    @Override
    public Mono<Void> deleteVersionedModel(String name, String version) {
        return write(s -> s.deleteVersionedModel(name, version));
    }

    @Override
    public Mono<Void> addModelLinks(String app, List<String> models) {
        return write(s -> s.addModelLinks(app, models));
    }

    @Override
    public Mono<Void> deleteModelLinks(String app, List<String> models) {
        return write(s -> s.deleteModelLinks(app, models));
    }

    @Override
    public Mono<Void> addReplica(ContainerReplica replica) {
        return write(s -> s.addReplica(replica));
    }

    @Override
    public Mono<Void> removeReplica(String id) {
        return write(s -> s.removeReplica(id));
    }

    @Override
    public Mono<Void> putProfile(ModelProfile profile) {
        return write(s -> s.putProfile(profile));
    }

    @Override
    public Mono<Void> applyPipelinePlan(PipelinePlanChange plan) {
        return write(s -> s.applyPipelinePlan(plan));
    }

    @Override
    public void addListener(Consumer<RegistrySnapshot> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Nothing to release. */
    @Override
    public void close() {
    }

    private Mono<Void> write(Predicate<RegistryState> op) {
        return Mono.fromRunnable(() -> {
            synchronized (writeLock) {
                RegistrySnapshot before = snapshot;
                RegistryState state = RegistryState.of(before);
                if (!op.test(state)) {
                    return;
                }
                snapshot = state.toSnapshot(before.revision() + 1);
            }
            notifyListeners();
        });
    }

    /** Delivers the newest snapshot, once per revision, in revision order. */
    private void notifyListeners() {
        synchronized (notifyLock) {
            RegistrySnapshot s = snapshot;
            if (s.revision() <= notifiedRevision) {
                return;
            }
            notifiedRevision = s.revision();
            for (Consumer<RegistrySnapshot> l : listeners) {
                try {
                    l.accept(s);
                } catch (RuntimeException e) {
                    log.warn("registry listener {} failed", l, e);
                }
            }
        }
    }
}
