package io.servegate.gateway.containers.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.containers.RestartPolicy;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIf;
import reactor.core.scheduler.Schedulers;

/**
 * The Docker manager against the real engine: the onnx container image is built FROM the local
 * base, two replicas serve the Fashion-MNIST CNN, one is killed and comes back, then the
 * deployment is scaled down and removed; a replica whose port something else took is replaced on
 * a fresh one.
 */
@EnabledIf(value = "io.servegate.gateway.containers.docker.DockerEngine#available",
        disabledReason = "no Docker engine or no local base image: run bin/docker-setup (CI does)")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerContainerManagerTest {

    private static final Duration READY = Duration.ofSeconds(120);

    private final String owner = "servegate-test-" + UUID.randomUUID().toString().substring(0, 8);
    private DockerClient docker;
    private String image;
    private InMemoryRegistry registry;
    private DockerContainerManager manager;

    @BeforeAll
    void engine() {
        docker = DockerEngine.connectOrSkip();
        image = DockerEngine.buildOnnxImage(docker);
        registry = new InMemoryRegistry();
        registry.addModel(new ModelVersion("fmnist-cnn", "1", List.of(), "floats", image, null, -1)).block();
        manager = new DockerContainerManager(docker, registry,
                new ReadinessProbe(Duration.ofSeconds(1), Duration.ofMillis(200), Schedulers.parallel()),
                new DockerOptions("host", 8001, RestartPolicy.ON_FAILURE, 0, Duration.ofMillis(300),
                        Duration.ofSeconds(1), 2, Duration.ofSeconds(60), Duration.ofSeconds(5), owner),
                Schedulers.parallel());
    }

    @AfterAll
    void close() throws Exception {
        if (manager != null) {
            manager.close();
            assertThat(containers()).as("close removes the manager's containers").isEmpty();
            registry.close();
            docker.close();
        }
    }

    @Test
    void deploysPredictsSurvivesAKillScalesAndRemoves() throws Exception {
        // the set of replica ids each registry revision held, to prove the killed one was unregistered
        Set<String> seenAbsent = ConcurrentHashMap.newKeySet();
        Deployment started = manager.deploy(new DeploymentSpec("fmnist-cnn", "1", image, List.of(), List.of(), 2,
                new DeploymentSpec.Resources(1.5, 512L << 20, 0), Map.of("INTRA_OP_THREADS", "1"))).block();
        assertThat(started.replicas()).hasSize(2);
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("fmnist-cnn", "1", image, null, null, 1, null, null))
                .block()).isInstanceOf(ContainerManagerException.class).hasMessageContaining("already deployed");

        await("both replicas registered after readiness", () -> replicas().size() == 2);
        assertThat(manager.list().block().get(0).readyReplicas()).isEqualTo(2);

        // labels, limits and restart policy as configured
        List<Container> running = containers();
        assertThat(running).hasSize(2);
        InspectContainerResponse first = docker.inspectContainerCmd(running.get(0).getId()).exec();
        assertThat(first.getConfig().getLabels()).containsEntry("servegate.managed", "true")
                .containsEntry("servegate.model", "fmnist-cnn").containsEntry("servegate.version", "1");
        assertThat(first.getHostConfig().getNanoCPUs()).isEqualTo(1_500_000_000L);
        assertThat(first.getHostConfig().getMemory()).isEqualTo(512L << 20);
        assertThat(first.getHostConfig().getNetworkMode()).isEqualTo("host");
        assertThat(first.getHostConfig().getRestartPolicy().getName()).isEqualTo("on-failure");

        // every replica answers real Fashion-MNIST images as the model itself does
        FashionMnist test = FashionMnist.testSet();
        List<float[]> images = test.images().subList(0, 200);
        List<String> expected;
        try (OnnxPredictor onnx = new OnnxPredictor(Path.of("../../containers/onnx/models/fmnist-cnn.onnx"))) {
            expected = onnx.predictBatch(images);
        }
        int correct = 0;
        for (int i = 0; i < images.size(); i++) {
            correct += expected.get(i).equals(Integer.toString(test.label(i))) ? 1 : 0;
        }
        assertThat(correct).as("the CNN's accuracy on the first 200 test images").isGreaterThan(170);
        for (ContainerReplica r : replicas()) {
            assertThat(predict(r.address(), images)).as("answers of " + r.id()).containsExactlyElementsOf(expected);
        }

        // crash one (SIGKILL to its main process from the host; `docker kill` would count as a manual
        // stop, which Docker never restarts): unregistered, restarted by Docker (on-failure: exit 137),
        // registered again once ready
        ContainerReplica victim = replicas().get(0);
        registry.addListener(s -> {
            if (s.replicas("fmnist-cnn", "1").stream().noneMatch(r -> r.id().equals(victim.id()))) {
                seenAbsent.add(victim.id());
            }
        });
        String victimContainer = containerOf(victim.id()).getId();
        long pid = docker.inspectContainerCmd(victimContainer).exec().getState().getPidLong();
        assertThat(ProcessHandle.of(pid).orElseThrow().destroyForcibly()).isTrue();
        await("the killed replica is unregistered", () -> seenAbsent.contains(victim.id()));
        await("Docker restarts it and it is registered again", () -> replicas().stream()
                .anyMatch(r -> r.id().equals(victim.id())) && replicas().size() == 2);
        assertThat(docker.inspectContainerCmd(victimContainer).exec().getRestartCount()).isGreaterThanOrEqualTo(1);
        assertThat(manager.list().block().get(0).replicas()).filteredOn(r -> r.id().equals(victim.id()))
                .singleElement().satisfies(r -> assertThat(r.restarts()).isGreaterThanOrEqualTo(1));
        assertThat(predict(victim.address(), images)).containsExactlyElementsOf(expected);

        // scale down to 1
        Deployment one = manager.setReplicas("fmnist-cnn", "1", 1).block();
        assertThat(one.desiredReplicas()).isEqualTo(1);
        assertThat(one.replicas()).hasSize(1);
        assertThat(replicas()).hasSize(1);
        assertThat(containers()).hasSize(1);
        assertThat(predict(replicas().get(0).address(), images.subList(0, 10)))
                .containsExactlyElementsOf(expected.subList(0, 10));

        // remove: containers gone, nothing registered
        manager.remove("fmnist-cnn", "1").block();
        assertThat(replicas()).isEmpty();
        assertThat(containers()).isEmpty();
        assertThat(manager.list().block()).isEmpty();
        assertThatThrownBy(() -> manager.setReplicas("fmnist-cnn", "1", 2).block())
                .isInstanceOf(ContainerManagerException.class).hasMessageContaining("not deployed");
    }

    @Test
    void refusesAnUnregisteredModelAndAnUnknownImage() {
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("nosuch", "1", image, null, null, 1, null, null))
                .block()).isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.NOT_FOUND));
        registry.addModel(new ModelVersion("ghost", "1", List.of(), "floats", null, null, -1)).block();
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("ghost", "1", "servegate/no-such-image:0", null,
                null, 1, null, null)).block()).isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.INVALID));
        assertThat(manager.list().block()).noneMatch(d -> d.modelName().equals("ghost"));
    }

    @Test
    void aReplicaWhosePortIsTakenWhileItIsDownIsReplacedOnAFreshPort() throws Exception {
        String quickOwner = owner + "-ports";
        InMemoryRegistry own = new InMemoryRegistry();
        own.addModel(new ModelVersion("fmnist-cnn", "1", List.of(), "floats", image, null, -1)).block();
        DockerContainerManager quick = new DockerContainerManager(docker, own,
                new ReadinessProbe(Duration.ofSeconds(1), Duration.ofMillis(200), Schedulers.parallel()),
                new DockerOptions("host", 8001, RestartPolicy.ON_FAILURE, 0, Duration.ofMillis(300),
                        Duration.ofSeconds(1), 2, Duration.ofSeconds(20), Duration.ofSeconds(5), quickOwner),
                Schedulers.parallel());
        List<float[]> images = FashionMnist.testSet().images().subList(0, 10);
        try {
            quick.deploy(new DeploymentSpec("fmnist-cnn", "1", image, List.of(), List.of(), 1, null,
                    Map.of("INTRA_OP_THREADS", "1"))).block();
            await("the replica registered", () -> own.snapshot().replicas("fmnist-cnn", "1").size() == 1);
            ContainerReplica first = own.snapshot().replicas("fmnist-cnn", "1").get(0);
            List<String> expected = predict(first.address(), images);
            int port = Integer.parseInt(first.address().substring(first.address().lastIndexOf(':') + 1));

            // its process dies and, before Docker has restarted it, something else listens on its port:
            // every restart in place fails to bind it
            long pid = docker.inspectContainerCmd(containers(quickOwner).get(0).getId()).exec().getState().getPidLong();
            assertThat(ProcessHandle.of(pid).orElseThrow().destroyForcibly()).isTrue();
            try (ServerSocket squatter = bindWhenFree(port)) {
                await("a replacement on another port is registered", () -> {
                    List<ContainerReplica> now = own.snapshot().replicas("fmnist-cnn", "1");
                    return now.size() == 1 && !now.get(0).id().equals(first.id());
                });
                ContainerReplica second = own.snapshot().replicas("fmnist-cnn", "1").get(0);
                assertThat(second.address()).isNotEqualTo(first.address());
                assertThat(containers(quickOwner)).as("the stuck container is removed").singleElement()
                        .satisfies(c -> assertThat(c.getLabels()).containsEntry("servegate.replica", second.id()));
                assertThat(predict(second.address(), images)).containsExactlyElementsOf(expected);
            }
        } finally {
            quick.close();
            own.close();
        }
        assertThat(containers(quickOwner)).isEmpty();
    }

    @Test
    void aPublishedPortTakenBeforeDockerBindsItIsSwappedForAnother() throws Exception {
        String publishedOwner = owner + "-published";
        String network = owner + "-net";
        docker.createNetworkCmd().withName(network).exec();
        try (ServerSocket squatter = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int taken = squatter.getLocalPort();
            AtomicBoolean handedOut = new AtomicBoolean();
            // the reservation's first port is one this test already holds, as if taken after it was found free
            ReplicaContainers containers = new ReplicaContainers(docker, new DockerOptions(network, 8001,
                    RestartPolicy.ON_FAILURE, 0, Duration.ofMillis(300), Duration.ofSeconds(1), 2,
                    Duration.ofSeconds(60), Duration.ofSeconds(5), publishedOwner),
                    new PortReservations(() -> handedOut.getAndSet(true) ? PortReservations.freeLoopbackPort() : taken));
            String name = publishedOwner + "-1";
            ReplicaContainers.Started started = containers.start(new DeploymentSpec("fmnist-cnn", "1", image, List.of(),
                    List.of(), 1, null, Map.of("INTRA_OP_THREADS", "1")), name);
            try {
                assertThat(handedOut).isTrue();
                assertThat(started.port()).isNotEqualTo(taken);
                assertThat(containers(publishedOwner)).as("the container that could not start is removed")
                        .singleElement().satisfies(c -> assertThat(c.getId()).isEqualTo(started.containerId()));
                List<float[]> images = FashionMnist.testSet().images().subList(0, 10);
                List<String> answers = List.of();
                long until = System.nanoTime() + READY.toNanos();
                while (answers.isEmpty() && System.nanoTime() < until) {
                    try {
                        answers = predict("127.0.0.1:" + started.port(), images);
                    } catch (Exception notYet) {
                        Thread.sleep(500);
                    }
                }
                assertThat(answers).as("answers through the published port").hasSize(10);
            } finally {
                containers.remove(started.containerId(), name, started.port());
            }
        } finally {
            docker.removeNetworkCmd(network).exec();
        }
        assertThat(containers(publishedOwner)).isEmpty();
    }

    private static ServerSocket bindWhenFree(int port) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            ServerSocket s = new ServerSocket();
            try {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return s;
            } catch (BindException stillHeld) {
                s.close();
                assertThat(System.nanoTime()).as("port %d freed by the killed process", port).isLessThan(until);
                Thread.sleep(5);
            }
        }
    }

    private List<String> predict(String address, List<float[]> images) throws Exception {
        try (ContainerClient client = ContainerClient.connect(address)) {
            return client.infer("fmnist-cnn", "1", TensorType.FLOATS, images, TensorType.STRINGS,
                    Duration.ofSeconds(30)).get().outputs();
        }
    }

    private List<ContainerReplica> replicas() {
        return registry.snapshot().replicas("fmnist-cnn", "1");
    }

    private List<Container> containers() {
        return containers(owner);
    }

    private List<Container> containers(String labelledOwner) {
        return docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of("servegate.owner", labelledOwner)).exec();
    }

    private Container containerOf(String replicaId) {
        return containers().stream().filter(c -> replicaId.equals(c.getLabels().get("servegate.replica")))
                .findFirst().orElseThrow();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + READY.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(until);
            Thread.sleep(100);
        }
    }
}
