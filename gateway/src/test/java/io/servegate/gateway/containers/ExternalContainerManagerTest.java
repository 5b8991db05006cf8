package io.servegate.gateway.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/** The external manager against real OIP servers on loopback ports that come, go and come back. */
class ExternalContainerManagerTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private InMemoryRegistry registry;
    private ExternalContainerManager manager;
    private ModelContainer<float[], String> a;
    private ModelContainer<float[], String> b;

    @BeforeEach
    void setUp() {
        registry = new InMemoryRegistry();
        registry.addModel(new ModelVersion("emu", "1", List.of(), "floats", "", "", -1)).block();
        manager = new ExternalContainerManager(registry,
                new ReadinessProbe(Duration.ofSeconds(1), Duration.ofMillis(100), Schedulers.parallel()),
                Duration.ofMillis(500), Duration.ofMillis(100), 2, Schedulers.parallel());
    }

    @AfterEach
    void tearDown() {
        manager.close();
        for (ModelContainer<?, ?> c : new ModelContainer<?, ?>[] {a, b}) {
            if (c != null) {
                c.close();
            }
        }
        registry.close();
    }

    private static ModelContainer<float[], String> container(int port) throws Exception {
        return ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                new EmulatedPredictor<float[]>(0, 0, 3)).name("emu").version("1").host("127.0.0.1").port(port)
                .drainTimeout(Duration.ofMillis(100)).build().start();
    }

    @Test
    void registersReadyAddressesAndFollowsFailureAndRecovery() throws Exception {
        a = container(0);
        int aPort = a.port();
        int bPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            bPort = s.getLocalPort();
        }
        Deployment d = manager.deploy(new DeploymentSpec("emu", "1", null, null,
                List.of("127.0.0.1:" + aPort, "127.0.0.1:" + bPort), 2, null, null)).block();
        assertThat(d.replicas()).extracting(ReplicaStatus::id).containsExactly("emu-1-e0", "emu-1-e1");

        await(() -> addresses().containsKey("emu-1-e0"), "the live address registered");
        await(() -> state("emu-1-e1") == ReplicaStatus.State.UNHEALTHY, "the dead address reported unhealthy");
        assertThat(addresses()).containsOnlyKeys("emu-1-e0");

        b = container(bPort);
        await(() -> addresses().containsKey("emu-1-e1"), "the late address registered once ready");
        assertThat(state("emu-1-e1")).isEqualTo(ReplicaStatus.State.READY);

        a.close();
        a = null;
        await(() -> !addresses().containsKey("emu-1-e0"), "the failed address unregistered");
        assertThat(state("emu-1-e0")).isEqualTo(ReplicaStatus.State.UNHEALTHY);
        a = container(aPort);
        await(() -> addresses().containsKey("emu-1-e0"), "the recovered address registered again");
        assertThat(addresses()).containsOnlyKeys("emu-1-e0", "emu-1-e1");

        assertThatThrownBy(() -> manager.setReplicas("emu", "1", 3).block())
                .isInstanceOfSatisfying(ContainerManagerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.INVALID);
                    assertThat(e.getMessage()).contains("cannot scale");
                });
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("emu", "1", null, null,
                List.of("127.0.0.1:" + aPort), 1, null, null)).block())
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.CONFLICT));

        manager.remove("emu", "1").block(WAIT);
        assertThat(registry.snapshot().replicas()).isEmpty();
        assertThat(manager.list().block()).isEmpty();
    }

    @Test
    void refusesWhatItCannotDo() {
        for (DeploymentSpec spec : List.of(
                new DeploymentSpec("emu", "1", null, List.of("/bin/true"), List.of("127.0.0.1:1"), 1, null, null),
                new DeploymentSpec("emu", "1", "img", null, List.of("127.0.0.1:1"), 1, null, null),
                new DeploymentSpec("emu", "1", null, null, List.of(), 0, null, null),
                new DeploymentSpec("emu", "1", null, null, List.of("127.0.0.1:1"), 2, null, null))) {
            assertThatThrownBy(() -> manager.deploy(spec).block())
                    .isInstanceOfSatisfying(ContainerManagerException.class,
                            e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.INVALID));
        }
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("nope", "1", null, null,
                List.of("127.0.0.1:1"), 1, null, null)).block())
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.NOT_FOUND));
        assertThat(manager.list().block()).isEmpty();
    }

    @Test
    void anAddressServingAnotherModelIsReportedWithWhatItServes() throws Exception {
        a = container(0); // serves emu:1
        registry.addModel(new ModelVersion("wrongname", "1", List.of(), "floats", "", "", -1)).block();
        manager.deploy(new DeploymentSpec("wrongname", "1", null, null, List.of("127.0.0.1:" + a.port()), 1, null,
                null)).block();
        await(() -> state("wrongname-1-e0") == ReplicaStatus.State.UNHEALTHY, "the mismatch reported");
        ReplicaStatus r = manager.list().block().get(0).replicas().get(0);
        assertThat(r.detail()).contains("does not serve the registered model version", "ModelReady(wrongname, version 1)",
                "NOT_FOUND", "emu");
        assertThat(addresses()).isEmpty();
    }

    private ReplicaStatus.State state(String id) {
        return manager.list().block().get(0).replicas().stream().filter(r -> r.id().equals(id)).findFirst()
                .orElseThrow().state();
    }

    private Map<String, String> addresses() {
        return registry.snapshot().replicas().stream()
                .collect(Collectors.toMap(ContainerReplica::id, ContainerReplica::address));
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long until = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(20);
        }
    }
}
