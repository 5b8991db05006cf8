package io.servegate.gateway.containers.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.containers.ReplicaStatus;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.Registry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Runs model versions on Kubernetes (fabric8 client): one {@code Deployment} and one headless
 * {@code Service} per model version, labelled {@value #MANAGED_BY}={@code servegate},
 * {@value #MODEL_LABEL} and {@value #VERSION_LABEL}; scaling goes through the Deployment's
 * {@code scale} subresource.
 *
 * <p>Kubernetes keeps the replicas running (its Deployment controller is the restart policy); the
 * gateway learns about them by watching (an informer on) the pods of its namespace that carry
 * {@value #MODEL_LABEL} and {@value #VERSION_LABEL}, its own and those of the Helm chart. A pod is registered
 * (replica id = pod name, address = {@code podIP:port}) once Kubernetes reports it Ready
 * <em>and</em> it passes our own {@link ReadinessProbe} (ServerReady and ModelReady for its model
 * version); it is unregistered as soon as it stops being Ready, starts terminating or is deleted.
 * The pod's own readiness probe is configurable ({@link Settings.ProbeKind}): the standard
 * {@code grpc.health.v1} check our SDK serves, an exec command for OIP servers without it
 * (Triton), or none.
 *
 * <p>Every fabric8 call runs on Reactor's bounded-elastic scheduler, and every registry write on
 * one dedicated thread, so events for one pod are applied in order and never on an event loop.
 * {@link #close()} stops watching but leaves the Deployments running: with a shared (Redis)
 * registry, other gateway instances still route to them.
 */
public final class KubernetesContainerManager implements ContainerManager {

    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String MODEL_LABEL = "servegate.io/model";
    public static final String VERSION_LABEL = "servegate.io/version";
    static final String MANAGER = "servegate";
    static final String PORT_NAME = "grpc";

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesContainerManager.class);

    /**
     * How the manager configures its Deployments.
     *
     * @param namespace     where Deployments, Services and pods live (empty: the client's, see {@link KubernetesContainerManager#create})
     * @param containerPort the OIP gRPC port every model container listens on ({@code PORT})
     * @param probe         what Kubernetes' own readiness probe on the model containers is
     * @param probeCommand  the command of an {@code EXEC} probe
     * @param readyTimeout  how long our OIP check may take to pass once Kubernetes says a pod is Ready
     * @param resync        how often the informer re-delivers every pod (retries a failed check)
     */
    public record Settings(String namespace, int containerPort, ProbeKind probe, List<String> probeCommand,
            Duration readyTimeout, Duration resync) {

        /** The pod readiness probe: grpc.health.v1 (our SDKs), an exec command (e.g. Triton), or none. */
        public enum ProbeKind { GRPC, EXEC, NONE }

        public Settings {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(probe, "probe");
            probeCommand = probeCommand == null ? List.of() : List.copyOf(probeCommand);
            if (probe == ProbeKind.EXEC && probeCommand.isEmpty()) {
                throw new IllegalArgumentException("an exec readiness probe needs a command");
            }
            if (containerPort < 1 || containerPort > 65535) {
                throw new IllegalArgumentException("containerPort must be in 1..65535, got " + containerPort);
            }
        }
    }

    /** What the manager knows about one pod; replaced (never mutated) on each event. */
    private record PodView(String name, String model, String version, String address, boolean k8sReady,
            boolean terminating, int restarts) {
    }

    private enum Check { PENDING, PASSED, FAILED }

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final Registry registry;
    private final ReadinessProbe probe;
    private final Settings settings;
    private final ModelManifests manifests;
    private final ExecutorService writer;
    private final Map<String, PodView> pods = new ConcurrentHashMap<>();
    private final Map<String, Check> checks = new ConcurrentHashMap<>();
    private final SharedIndexInformer<Pod> informer;

    /**
     * A manager on a client it does not own (closing the manager leaves the client open).
     *
     * @param settings its namespace must not be empty
     */
    public KubernetesContainerManager(KubernetesClient client, Registry registry, ReadinessProbe probe,
            Settings settings) {
        this(client, false, registry, probe, settings);
    }

    /**
     * A manager with its own client, configured as fabric8 does it (in a pod: the service account;
     * elsewhere: {@code KUBECONFIG} / {@code ~/.kube/config}). An empty namespace in
     * {@code settings} means the client's (in a pod: the pod's own).
     */
    public static KubernetesContainerManager create(Registry registry, ReadinessProbe probe, Settings settings) {
        KubernetesClient client = new KubernetesClientBuilder().build();
        String namespace = !settings.namespace().isEmpty() ? settings.namespace()
                : client.getNamespace() != null ? client.getNamespace() : "default";
        try {
            return new KubernetesContainerManager(client, true, registry, probe, new Settings(namespace,
                    settings.containerPort(), settings.probe(), settings.probeCommand(), settings.readyTimeout(),
                    settings.resync()));
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    private KubernetesContainerManager(KubernetesClient client, boolean ownsClient, Registry registry,
            ReadinessProbe probe, Settings settings) {
        if (settings.namespace().isEmpty()) {
            throw new IllegalArgumentException("a namespace is required");
        }
        this.client = client;
        this.ownsClient = ownsClient;
        this.registry = registry;
        this.probe = probe;
        this.settings = settings;
        this.manifests = new ModelManifests(settings);
        this.writer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "servegate-k8s-replicas");
            t.setDaemon(true);
            return t;
        });
        this.informer = watchPods();
    }

    /** Lists and watches (blocking until the first list arrives) every pod with a model label. */
    private SharedIndexInformer<Pod> watchPods() {
        try {
            // not only ours: the Helm chart's model Deployments are registered too
            return client.pods().inNamespace(settings.namespace()).withLabel(MODEL_LABEL)
                    .inform(new ResourceEventHandler<>() {
                        @Override
                        public void onAdd(Pod pod) {
                            execute(() -> observed(pod));
                        }
    
                        @Override
                        public void onUpdate(Pod oldPod, Pod pod) {
                            execute(() -> observed(pod));
                        }
    
                        @Override
                        public void onDelete(Pod pod, boolean finalStateUnknown) {
                            execute(() -> gone(pod.getMetadata().getName()));
                        }
                    }, settings.resync().toMillis());
        } catch (RuntimeException e) {
            writer.shutdownNow();
            throw new ContainerManagerException(ContainerManagerException.Kind.PLATFORM,
                    "cannot watch pods in namespace " + settings.namespace() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String kind() {
        return "kubernetes";
    }

    @Override
    public Mono<Deployment> deploy(DeploymentSpec spec) {
        if (spec.image() == null || spec.image().isBlank()) {
            return Mono.error(new ContainerManagerException(ContainerManagerException.Kind.INVALID,
                    "the kubernetes manager needs an image"));
        }
        String name = ModelManifests.resourceName(spec.modelName(), spec.modelVersion());
        return blocking(() -> {
            var deployments = client.apps().deployments().inNamespace(settings.namespace());
            if (deployments.withName(name).get() != null) {
                throw new ContainerManagerException(ContainerManagerException.Kind.CONFLICT, "model "
                        + spec.modelName() + ":" + spec.modelVersion() + " is already deployed as " + name);
            }
            client.services().inNamespace(settings.namespace()).resource(manifests.service(name, spec))
                    .createOr(NonDeletingOperation::update);
            return deployments.resource(manifests.deployment(name, spec)).create();
        }).map(this::view);
    }

    @Override
    public Mono<Deployment> setReplicas(String modelName, String modelVersion, int replicas) {
        if (replicas < 0) {
            return Mono.error(new ContainerManagerException(ContainerManagerException.Kind.INVALID,
                    "replicas must be >= 0, got " + replicas));
        }
        String name = ModelManifests.resourceName(modelName, modelVersion);
        return blocking(() -> {
            var deployment = client.apps().deployments().inNamespace(settings.namespace()).withName(name);
            if (deployment.get() == null) {
                throw notDeployed(modelName, modelVersion);
            }
            deployment.scale(replicas); // PUT .../deployments/{name}/scale
            return deployment.get();
        }).map(this::view);
    }

    @Override
    public Mono<List<Deployment>> list() {
        return blocking(() -> client.apps().deployments().inNamespace(settings.namespace())
                .withLabel(MANAGED_BY, MANAGER).list().getItems())
                .map(items -> items.stream().map(this::view).toList());
    }

    @Override
    public Mono<Void> remove(String modelName, String modelVersion) {
        String name = ModelManifests.resourceName(modelName, modelVersion);
        return blocking(() -> {
            client.apps().deployments().inNamespace(settings.namespace()).withName(name).delete();
            client.services().inNamespace(settings.namespace()).withName(name).delete();
            return name;
        }).then(Mono.fromFuture(() -> CompletableFuture.runAsync(() -> pods.values().stream()
                .filter(p -> p.model().equals(modelName) && p.version().equals(modelVersion))
                .map(PodView::name).toList().forEach(this::gone), writer)));
    }

    @Override
    public void close() {
        informer.close();
        writer.shutdown();
        try {
            writer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            client.close();
        }
    }

    // ---- replica tracking: every method below runs on the writer thread ----

    private void observed(Pod pod) {
        PodView view = viewOf(pod);
        if (view == null) {
            return;
        }
        PodView before = pods.put(view.name(), view);
        boolean wanted = view.k8sReady() && !view.terminating() && view.address() != null;
        if (!wanted) {
            if (checks.remove(view.name()) == Check.PASSED) {
                unregister(view.name());
            }
            return;
        }
        boolean sameEndpoint = before != null && before.k8sReady() && !before.terminating()
                && Objects.equals(before.address(), view.address());
        Check check = checks.get(view.name());
        if (sameEndpoint && (check == Check.PENDING || check == Check.PASSED)) {
            return; // nothing changed that matters; a FAILED check is retried on each update or resync
        }
        checks.put(view.name(), Check.PENDING);
        probe(view);
    }

    private void probe(PodView view) {
        probe.awaitReady(view.address(), view.model(), view.version(), settings.readyTimeout())
                .subscribe(ready -> execute(() -> checked(view, ready)));
    }

    private void execute(Runnable task) {
        if (!writer.isShutdown()) {
            writer.execute(task);
        }
    }

    private void checked(PodView view, boolean ready) {
        if (pods.get(view.name()) != view) {
            return; // the pod changed while we checked; the newer event decides
        }
        if (!ready) {
            if (checks.put(view.name(), Check.FAILED) != Check.FAILED) {
                LOG.warn("pod {} is Ready for Kubernetes but failed the OIP readiness check at {} for {}:{}; "
                        + "checking again until it passes or the pod changes",
                        view.name(), view.address(), view.model(), view.version());
            }
            probe(view); // a slow model load must not wait for the next resync
            return;
        }
        try {
            registry.addReplica(new ContainerReplica(view.name(), view.model(), view.version(), view.address()))
                    .block(Duration.ofSeconds(30));
            checks.put(view.name(), Check.PASSED);
            LOG.info("registered pod {} at {} for {}:{}", view.name(), view.address(), view.model(), view.version());
        } catch (RuntimeException e) {
            LOG.warn("could not register pod {}: {}", view.name(), e.toString());
            checks.put(view.name(), Check.FAILED);
        }
    }

    private void gone(String podName) {
        pods.remove(podName);
        if (checks.remove(podName) == Check.PASSED) {
            unregister(podName);
        }
    }

    private void unregister(String podName) {
        try {
            registry.removeReplica(podName).block(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            LOG.warn("could not unregister pod {}: {}", podName, e.toString());
        }
    }

    private PodView viewOf(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        String model = labels == null ? null : labels.get(MODEL_LABEL);
        String version = labels == null ? null : labels.get(VERSION_LABEL);
        if (model == null || version == null) {
            return null;
        }
        var status = pod.getStatus();
        boolean ready = status != null && status.getConditions() != null && status.getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        String ip = status == null ? null : status.getPodIP();
        int restarts = status == null || status.getContainerStatuses() == null ? 0
                : status.getContainerStatuses().stream().mapToInt(s -> s.getRestartCount() == null ? 0
                        : s.getRestartCount()).sum();
        return new PodView(pod.getMetadata().getName(), model, version,
                ip == null || ip.isEmpty() ? null : ip + ":" + portOf(pod), ready,
                pod.getMetadata().getDeletionTimestamp() != null, restarts);
    }

    private int portOf(Pod pod) {
        return pod.getSpec() == null ? settings.containerPort() : pod.getSpec().getContainers().stream()
                .flatMap(c -> c.getPorts() == null ? Stream.<ContainerPort>empty() : c.getPorts().stream())
                .filter(p -> PORT_NAME.equals(p.getName()))
                .map(ContainerPort::getContainerPort)
                .findFirst().orElse(settings.containerPort());
    }

    private Deployment view(io.fabric8.kubernetes.api.model.apps.Deployment d) {
        Map<String, String> labels = d.getMetadata().getLabels();
        String model = labels.get(MODEL_LABEL);
        String version = labels.get(VERSION_LABEL);
        List<ReplicaStatus> replicas = informer.getStore().list().stream()
                .filter(p -> p.getMetadata().getLabels() != null
                        && model.equals(p.getMetadata().getLabels().get(MODEL_LABEL))
                        && version.equals(p.getMetadata().getLabels().get(VERSION_LABEL)))
                .map(this::viewOf)
                .filter(Objects::nonNull)
                .map(this::status)
                .toList();
        Integer desired = d.getSpec() == null ? null : d.getSpec().getReplicas();
        return new Deployment(model, version, desired == null ? 1 : desired, replicas);
    }

    private ReplicaStatus status(PodView p) {
        ReplicaStatus.State state;
        if (p.terminating()) {
            state = ReplicaStatus.State.STOPPED;
        } else if (!p.k8sReady()) {
            state = p.restarts() > 0 ? ReplicaStatus.State.RESTARTING : ReplicaStatus.State.STARTING;
        } else {
            Check check = checks.get(p.name());
            state = check == Check.PASSED ? ReplicaStatus.State.READY
                    : check == Check.FAILED ? ReplicaStatus.State.UNHEALTHY : ReplicaStatus.State.STARTING;
        }
        return new ReplicaStatus(p.name(), p.address(), state, p.restarts());
    }

    private static ContainerManagerException notDeployed(String model, String version) {
        return new ContainerManagerException(ContainerManagerException.Kind.NOT_FOUND,
                "model " + model + ":" + version + " is not deployed on kubernetes");
    }

    private static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic())
                .onErrorMap(KubernetesClientException.class, e -> new ContainerManagerException(
                        ContainerManagerException.Kind.PLATFORM, "kubernetes API: " + e.getMessage(), e));
    }
}
