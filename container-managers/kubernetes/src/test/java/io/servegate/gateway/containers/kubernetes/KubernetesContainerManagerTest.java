package io.servegate.gateway.containers.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.containers.ReplicaStatus;
import io.servegate.gateway.containers.kubernetes.KubernetesContainerManager.Settings;
import io.servegate.gateway.containers.kubernetes.KubernetesContainerManager.Settings.ProbeKind;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * The Kubernetes manager against fabric8's mock API server in CRUD mode (no real cluster can run
 * here), with real OIP model containers behind the pod addresses: Linux routes all of 127/8 to
 * loopback, so each "pod" is a real gRPC server bound to its own 127.0.0.x on one shared port.
 */
@EnableKubernetesMockClient(crud = true)
class KubernetesContainerManagerTest {

    private static final String NS = "models";
    private static final Duration WAIT = Duration.ofSeconds(20);

    KubernetesMockServer server;
    KubernetesClient client;

    private final InMemoryRegistry registry = new InMemoryRegistry();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        registry.close();
    }

    private KubernetesContainerManager manager(int port, ProbeKind probe, List<String> probeCommand) {
        ReadinessProbe oip = new ReadinessProbe(Duration.ofSeconds(2), Duration.ofMillis(100), Schedulers.parallel());
        KubernetesContainerManager m = new KubernetesContainerManager(client, registry, oip,
                new Settings(NS, port, probe, probeCommand, Duration.ofSeconds(5), Duration.ofMinutes(10)));
        closeables.add(m);
        return m;
    }

    private static DeploymentSpec spec(String model, String version, int replicas, DeploymentSpec.Resources r) {
        return new DeploymentSpec(model, version, "registry.example/servegate/onnx:0.1", List.of("--concurrency", "2"),
                null, replicas, r, Map.of("INPUT_TYPE", "floats"));
    }

    @Test
    void deployCreatesALabelledDeploymentAndHeadlessServiceWithEnvResourcesAndGrpcReadinessProbe() {
        KubernetesContainerManager m = manager(8001, ProbeKind.GRPC, null);
        Deployment view = m.deploy(spec("fashion", "3", 2, new DeploymentSpec.Resources(1.5, 512L << 20, 1)))
                .block(WAIT);
        assertThat(view.modelName()).isEqualTo("fashion");
        assertThat(view.desiredReplicas()).isEqualTo(2);

        var d = client.apps().deployments().inNamespace(NS).withName("sg-fashion-3").get();
        Map<String, String> labels = Map.of("app.kubernetes.io/managed-by", "servegate",
                "servegate.io/model", "fashion", "servegate.io/version", "3");
        assertThat(d.getMetadata().getLabels()).isEqualTo(labels);
        assertThat(d.getSpec().getReplicas()).isEqualTo(2);
        assertThat(d.getSpec().getSelector().getMatchLabels()).isEqualTo(labels);
        assertThat(d.getSpec().getTemplate().getMetadata().getLabels()).isEqualTo(labels);
        Container c = d.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(c.getImage()).isEqualTo("registry.example/servegate/onnx:0.1");
        assertThat(c.getArgs()).containsExactly("--concurrency", "2");
        assertThat(c.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue)))
                .containsExactlyInAnyOrderEntriesOf(Map.of("MODEL_NAME", "fashion", "MODEL_VERSION", "3",
                        "PORT", "8001", "HOST", "0.0.0.0", "INPUT_TYPE", "floats"));
        assertThat(c.getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("grpc");
            assertThat(p.getContainerPort()).isEqualTo(8001);
        });
        assertThat(c.getResources().getLimits()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "cpu", new Quantity("1500m"), "memory", new Quantity(Long.toString(512L << 20)),
                "nvidia.com/gpu", new Quantity("1")));
        assertThat(c.getReadinessProbe().getGrpc().getPort()).isEqualTo(8001);
        assertThat(c.getReadinessProbe().getGrpc().getService()).isEmpty();
        assertThat(c.getReadinessProbe().getExec()).isNull();

        Service s = client.services().inNamespace(NS).withName("sg-fashion-3").get();
        assertThat(s.getMetadata().getLabels()).isEqualTo(labels);
        assertThat(s.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(s.getSpec().getSelector()).isEqualTo(labels);
        assertThat(s.getSpec().getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getPort()).isEqualTo(8001);
            assertThat(p.getTargetPort().getStrVal()).isEqualTo("grpc");
        });

        assertThatThrownBy(() -> m.deploy(spec("fashion", "3", 1, null)).block(WAIT))
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.CONFLICT));
        assertThatThrownBy(() -> m.deploy(new DeploymentSpec("x", "1", null, null, null, 1, null, null)).block(WAIT))
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.INVALID));
        assertThat(m.list().block(WAIT)).extracting(Deployment::modelName, Deployment::desiredReplicas)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("fashion", 2));
    }

    @Test
    void probeIsConfigurableForOipServersWithoutGrpcHealth() {
        manager(8001, ProbeKind.EXEC, List.of("curl", "-sf", "localhost:8000/v2/health/ready"))
                .deploy(spec("triton", "1", 1, null)).block(WAIT);
        Container c = client.apps().deployments().inNamespace(NS).withName("sg-triton-1").get()
                .getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(c.getReadinessProbe().getExec().getCommand())
                .containsExactly("curl", "-sf", "localhost:8000/v2/health/ready");
        assertThat(c.getReadinessProbe().getGrpc()).isNull();
        assertThat(c.getResources().getLimits()).isEmpty();

        manager(8001, ProbeKind.NONE, null).deploy(spec("plain", "1", 1, null)).block(WAIT);
        assertThat(client.apps().deployments().inNamespace(NS).withName("sg-plain-1").get()
                .getSpec().getTemplate().getSpec().getContainers().get(0).getReadinessProbe()).isNull();
        assertThatThrownBy(() -> new Settings(NS, 8001, ProbeKind.EXEC, List.of(), WAIT, WAIT))
                .hasMessageContaining("needs a command");
    }

    @Test
    void createBuildsItsOwnClientFromFabric8ConfigAndTakesItsNamespaceWhenNoneIsSet() {
        // what GatewayConfiguration does for servegate.containers.manager=kubernetes; fabric8 reads these
        // system properties as it reads a pod's service account
        System.setProperty("kubernetes.master", client.getConfiguration().getMasterUrl());
        System.setProperty("kubernetes.trust.certificates", "true"); // the mock's self-signed certificate
        System.setProperty("kubernetes.http2.disable", "true");
        System.setProperty("kubernetes.namespace", "from-client");
        try (KubernetesContainerManager m = KubernetesContainerManager.create(registry,
                new ReadinessProbe(Duration.ofSeconds(1), Duration.ofMillis(100), Schedulers.parallel()),
                new Settings("", 8001, ProbeKind.GRPC, null, WAIT, Duration.ofMinutes(10)))) {
            m.deploy(spec("fashion", "3", 1, null)).block(WAIT);
            assertThat(client.apps().deployments().inNamespace("from-client").withName("sg-fashion-3").get())
                    .isNotNull();
        } finally {
            for (String p : List.of("kubernetes.master", "kubernetes.trust.certificates", "kubernetes.http2.disable",
                    "kubernetes.namespace")) {
                System.clearProperty(p);
            }
        }
    }

    @Test
    void namesAreDns1035LabelsAndDistinctWhenTheyHadToBeChanged() {
        assertThat(ModelManifests.resourceName("fashion", "3")).isEqualTo("sg-fashion-3");
        String dotted = ModelManifests.resourceName("resnet.v2", "1_0");
        String dashed = ModelManifests.resourceName("resnet-v2", "1-0");
        assertThat(dashed).isEqualTo("sg-resnet-v2-1-0");
        assertThat(dotted).matches("sg-resnet-v2-1-0-[0-9a-f]{8}").isNotEqualTo(dashed);
        String longName = ModelManifests.resourceName("m".repeat(63), "v".repeat(63));
        String otherLong = ModelManifests.resourceName("m".repeat(63), "v".repeat(62));
        assertThat(longName).hasSizeLessThanOrEqualTo(ModelManifests.MAX_NAME_LENGTH)
                .matches("[a-z]([-a-z0-9]*[a-z0-9])?").isNotEqualTo(otherLong);
    }

    @Test
    void setReplicasGoesThroughTheScaleSubresourceAndRemoveDeletesDeploymentAndService() throws Exception {
        KubernetesContainerManager m = manager(8001, ProbeKind.GRPC, null);
        m.deploy(spec("fashion", "3", 1, null)).block(WAIT);
        drainRequests();

        Deployment scaled = m.setReplicas("fashion", "3", 4).block(WAIT);
        assertThat(scaled.desiredReplicas()).isEqualTo(4);
        assertThat(client.apps().deployments().inNamespace(NS).withName("sg-fashion-3").get().getSpec().getReplicas())
                .isEqualTo(4);
        List<RecordedRequest> scaleCalls = drainRequests().stream()
                .filter(r -> r.getPath().startsWith("/apis/apps/v1/namespaces/models/deployments/sg-fashion-3/scale"))
                .toList();
        assertThat(scaleCalls).extracting(RecordedRequest::getMethod).contains("PUT");
        assertThatThrownBy(() -> m.setReplicas("nope", "1", 2).block(WAIT))
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.NOT_FOUND));

        m.remove("fashion", "3").block(WAIT);
        assertThat(client.apps().deployments().inNamespace(NS).withName("sg-fashion-3").get()).isNull();
        assertThat(client.services().inNamespace(NS).withName("sg-fashion-3").get()).isNull();
        assertThat(m.list().block(WAIT)).isEmpty();
        m.remove("fashion", "3").block(WAIT); // removing what is gone is a no-op
    }

    @Test
    void podsAreRegisteredOnlyWhenReadyAndPassingTheOipCheckAndUnregisteredWhenTheyStopBeing() throws Exception {
        registry.addModel(new ModelVersion("emu", "1", List.of(), "floats", null, null, 8)).block(WAIT);
        // two real model containers on one port, as two pods would be
        ModelContainer<float[], String> a = emulated("127.0.0.2", 0);
        int port = a.port();
        emulated("127.0.0.3", port);
        KubernetesContainerManager m = manager(port, ProbeKind.GRPC, null);
        m.deploy(spec("emu", "1", 3, null)).block(WAIT);
        var template = client.apps().deployments().inNamespace(NS).withName("sg-emu-1").get().getSpec().getTemplate();

        createPod(template, "sg-emu-1-a", "127.0.0.2", true);
        createPod(template, "sg-emu-1-b", "127.0.0.3", false);
        createPod(template, "sg-emu-1-c", "127.0.0.4", true); // Ready for Kubernetes, but nothing serves OIP there

        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.snapshot().replicas("emu", "1"))
                .containsExactly(new ContainerReplica("sg-emu-1-a", "emu", "1", "127.0.0.2:" + port)));
        await().atMost(WAIT).untilAsserted(() -> assertThat(states(m)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "sg-emu-1-a", ReplicaStatus.State.READY, "sg-emu-1-b", ReplicaStatus.State.STARTING,
                "sg-emu-1-c", ReplicaStatus.State.UNHEALTHY)));
        assertThat(registry.snapshot().replicas("emu", "1")).extracting(ContainerReplica::id)
                .as("the pod failing the OIP check is not registered").containsExactly("sg-emu-1-a");

        setReady("sg-emu-1-b", true);
        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.snapshot().replicas("emu", "1"))
                .extracting(ContainerReplica::id).containsExactlyInAnyOrder("sg-emu-1-a", "sg-emu-1-b"));
        assertThat(registry.snapshot().replicas("emu", "1")).extracting(ContainerReplica::address)
                .containsExactlyInAnyOrder("127.0.0.2:" + port, "127.0.0.3:" + port);

        setReady("sg-emu-1-a", false);
        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.snapshot().replicas("emu", "1"))
                .extracting(ContainerReplica::id).containsExactly("sg-emu-1-b"));

        client.pods().inNamespace(NS).withName("sg-emu-1-b").delete();
        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.snapshot().replicas("emu", "1")).isEmpty());
        assertThat(states(m)).doesNotContainKey("sg-emu-1-b");

        setReady("sg-emu-1-a", true);
        await().atMost(WAIT).untilAsserted(() -> assertThat(registry.snapshot().replicas("emu", "1"))
                .extracting(ContainerReplica::id).containsExactly("sg-emu-1-a"));
        m.remove("emu", "1").block(WAIT);
        assertThat(registry.snapshot().replicas("emu", "1")).as("remove unregisters at once").isEmpty();
    }

    private ModelContainer<float[], String> emulated(String host, int port) throws Exception {
        ModelContainer<float[], String> c = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                new EmulatedPredictor<float[]>(0, 0, 10)).name("emu").version("1").host(host).port(port)
                .drainTimeout(Duration.ZERO).build().start();
        closeables.add(c);
        return c;
    }

    private void createPod(io.fabric8.kubernetes.api.model.PodTemplateSpec template, String name, String ip,
            boolean ready) {
        Pod pod = new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).withLabels(template.getMetadata().getLabels())
                .endMetadata()
                .withSpec(template.getSpec())
                .build();
        client.pods().inNamespace(NS).resource(pod).create();
        setReady(name, ready, ip);
    }

    private void setReady(String name, boolean ready) {
        setReady(name, ready, null);
    }

    private void setReady(String name, boolean ready, String ip) {
        client.pods().inNamespace(NS).withName(name).editStatus(p -> new PodBuilder(p).editOrNewStatus()
                .withPodIP(ip != null ? ip : p.getStatus().getPodIP())
                .withPhase("Running")
                .withConditions(new io.fabric8.kubernetes.api.model.PodConditionBuilder()
                        .withType("Ready").withStatus(ready ? "True" : "False").build())
                .endStatus().build());
    }

    private static Map<String, ReplicaStatus.State> states(KubernetesContainerManager m) {
        return m.list().block(WAIT).stream().flatMap(d -> d.replicas().stream())
                .collect(Collectors.toMap(ReplicaStatus::id, ReplicaStatus::state));
    }

    private List<RecordedRequest> drainRequests() throws InterruptedException {
        List<RecordedRequest> out = new ArrayList<>();
        RecordedRequest r;
        while ((r = server.takeRequest(200, TimeUnit.MILLISECONDS)) != null) {
            out.add(r);
        }
        return out;
    }
}
