package io.servegate.gateway.autoscaling;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.containers.Backoff;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.dispatch.ReplicaPool;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The gateway's autoscalers, one per model version that has one (opt-in, through the admin
 * API's {@code set_autoscaling}), ticking on their own thread. They act through the
 * {@link ContainerManager} on versions it deployed; one that cannot scale (the external manager)
 * or that did not deploy the version is refused when the autoscaler is set.
 */
public final class AutoscalingService implements AutoCloseable {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AutoscalingService.class);

    private final ReplicaPool pool;
    private final ContainerManager containers;
    private final MeterRegistry meters;
    private final ServegateProperties.Autoscaling props;
    private final LongSupplier clock;
    private final Backoff backoff;
    private final BiPredicate<String, String> decides;
    private final Map<String, ModelAutoscaler> models = new ConcurrentHashMap<>();
    private final Scheduler thread = Schedulers.newSingle("servegate-autoscaler");
    private final Disposable ticking;

    /**
     * @param decides whether this gateway takes a model version's scaling decisions now: in a fleet,
     *     only the gateway that schedules the version sees its load, so only it scales it
     */
    public AutoscalingService(ReplicaPool pool, ContainerManager containers, MeterRegistry meters,
            ServegateProperties.Autoscaling props, LongSupplier clock, BiPredicate<String, String> decides) {
        this.pool = pool;
        this.decides = decides;
        this.containers = containers;
        this.meters = meters;
        this.props = props;
        this.clock = clock;
        this.backoff = new Backoff(props.retryInitial(), props.retryMax());
        long tick = props.tick().toNanos();
        this.ticking = thread.schedulePeriodically(this::tick, tick, tick, TimeUnit.NANOSECONDS);
    }

    /**
     * Turns a model version's autoscaler on, or replaces its configuration (its history starts
     * again). Fails with {@link ContainerManagerException}: {@code INVALID} when the manager
     * cannot scale, {@code CONFLICT} when it did not deploy the version.
     *
     * @return its state
     */
    public Mono<AutoscalingView> set(String model, String version, AutoscalerConfig config) {
        return setAll(List.of(new Target(model, version, config))).map(views -> views.get(0));
    }

    /** A model version and the configuration of its autoscaler. */
    public record Target(String model, String version, AutoscalerConfig config) {
    }

    /**
     * {@link #set} for several model versions at once (a pipeline's stages): every one must be
     * deployed by the manager, else none is set.
     *
     * @return their states, in order
     */
    public Mono<List<AutoscalingView>> setAll(List<Target> targets) {
        if (containers.kind().equals("external")) {
            Target t = targets.get(0);
            return Mono.error(new ContainerManagerException(ContainerManagerException.Kind.INVALID,
                    "the external container manager does not run containers, so it cannot scale '" + t.model() + ":"
                            + t.version() + "'; use the process, docker or kubernetes manager"));
        }
        return containers.list().map(deployments -> {
            List<Deployment> found = targets.stream().map(t -> deployments.stream()
                    .filter(x -> x.modelName().equals(t.model()) && x.modelVersion().equals(t.version())).findFirst()
                    .orElseThrow(() -> new ContainerManagerException(ContainerManagerException.Kind.CONFLICT,
                            "model version '" + t.model() + ":" + t.version() + "' is not deployed by the "
                                    + containers.kind() + " container manager; deploy it with deploy_model first")))
                    .toList();
            List<AutoscalingView> views = new ArrayList<>();
            for (int i = 0; i < targets.size(); i++) {
                Target t = targets.get(i);
                int desired = found.get(i).desiredReplicas();
                ModelAutoscaler next = models.compute(key(t.model(), t.version()), (k, old) -> {
                    if (old != null) {
                        old.close();
                    }
                    return new ModelAutoscaler(t.model(), t.version(), t.config(), desired, pool, containers, backoff,
                            props.decisionsKept(), meters, clock);
                });
                views.add(next.view());
            }
            return views;
        });
    }

    /** Turns a model version's autoscaler off; its replicas stay as they are. @return whether it had one */
    public boolean clear(String model, String version) {
        ModelAutoscaler old = models.remove(key(model, version));
        if (old != null) {
            old.close();
        }
        return old != null;
    }

    /** Every autoscaler's state, by model and version. */
    public List<AutoscalingView> views() {
        return models.values().stream().map(ModelAutoscaler::view)
                .sorted(Comparator.comparing(AutoscalingView::model).thenComparing(AutoscalingView::version))
                .toList();
    }

    private void tick() {
        for (ModelAutoscaler m : models.values()) {
            if (!decides.test(m.model, m.version)) {
                continue;
            }
            try {
                m.tick();
            } catch (RuntimeException e) { // one model's trouble must not stop the others' ticks
                LOG.error("autoscaler of {}:{} failed its tick", m.model, m.version, e);
            }
        }
    }

    private static String key(String model, String version) {
        return model + ':' + version;
    }

    @Override
    public void close() {
        ticking.dispose();
        thread.dispose();
        models.values().forEach(ModelAutoscaler::close);
        models.clear();
    }
}
