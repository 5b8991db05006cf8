package io.servegate.gateway.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.testsupport.JavaCommand;
import io.servegate.oip.client.ContainerClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The process manager with real child processes: emulated containers in their own JVMs on real
 * loopback ports, real OIP readiness checks, real SIGTERM and SIGKILL.
 */
class ProcessContainerManagerTest {

    private static final String EMULATED = "io.servegate.containers.emulated.EmulatedContainer";
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final ModelDirectories NO_MODEL_DIRECTORIES = new ModelDirectories(List.of(), List.of());

    @TempDir
    Path tmp;

    private InMemoryRegistry registry;
    private Scheduler scheduler;
    private ProcessContainerManager manager;

    @BeforeEach
    void setUp() {
        registry = new InMemoryRegistry();
        registry.addModel(new ModelVersion("emu", "1", List.of(), "floats", "", "", -1)).block();
        scheduler = Schedulers.newBoundedElastic(4, 100, "test-containers");
    }

    @AfterEach
    void tearDown() {
        if (manager != null) {
            manager.close();
        }
        scheduler.dispose();
        registry.close();
    }

    private ProcessContainerManager manager(RestartPolicy policy, Scheduler s) {
        ReadinessProbe probe = new ReadinessProbe(Duration.ofSeconds(1), Duration.ofMillis(100), s);
        manager = new ProcessContainerManager(registry, probe, new ProcessContainerManager.Settings(WAIT,
                Duration.ofMillis(200), 2, policy, new Backoff(Duration.ofMillis(200), Duration.ofSeconds(2)),
                Duration.ofSeconds(10), NO_MODEL_DIRECTORIES), s);
        return manager;
    }

    private List<String> emulated() throws Exception {
        return JavaCommand.of(tmp, EMULATED, "--beta-ms", "1", "--alpha-ms", "0.1");
    }

    private static DeploymentSpec spec(List<String> command, int replicas) {
        return new DeploymentSpec("emu", "1", null, command, null, replicas, null, Map.of("CLASSES", "3"));
    }

    @Test
    void registersReplicasOnlyOnceReadyAndRestartsAKilledOne() throws Exception {
        manager(RestartPolicy.ALWAYS, scheduler);
        List<Map.Entry<Long, List<String>>> registrations = new CopyOnWriteArrayList<>();
        registry.addListener(s -> registrations.add(Map.entry(System.nanoTime(),
                s.replicas().stream().map(ContainerReplica::id).toList())));
        // the containers cannot listen before `sleep 1` is over
        List<String> delayed = new ArrayList<>(List.of("/bin/sh", "-c", "sleep 1; exec \"$0\" \"$@\""));
        delayed.addAll(emulated());
        long deployed = System.nanoTime();
        Deployment d = manager.deploy(spec(delayed, 2)).block();

        assertThat(d.replicas()).extracting(ReplicaStatus::id).containsExactly("emu-1-p0", "emu-1-p1");
        assertThat(d.replicas()).allMatch(r -> r.state() == ReplicaStatus.State.STARTING);
        assertThat(manager.process("emu-1-p0")).get().matches(ProcessHandle::isAlive);
        assertThat(registry.snapshot().replicas()).as("nothing registered while starting").isEmpty();

        await(() -> readyCount() == 2, "both replicas ready");
        assertThat(registrations).as("registrations").isNotEmpty()
                .allMatch(e -> e.getKey() - deployed >= Duration.ofSeconds(1).toNanos());
        Map<String, String> addresses = addresses();
        assertThat(addresses).containsOnlyKeys("emu-1-p0", "emu-1-p1");
        for (ReplicaStatus r : deployment().replicas()) {
            assertThat(addresses.get(r.id())).isEqualTo(r.address());
            try (ContainerClient c = ContainerClient.connect(r.address())) {
                assertThat(c.serverReady(Duration.ofSeconds(5)).get()).isTrue();
            }
        }

        ProcessHandle first = manager.process("emu-1-p0").orElseThrow();
        first.destroyForcibly();
        await(() -> !addresses().containsKey("emu-1-p0"), "the killed replica unregistered");
        assertThat(addresses()).containsKey("emu-1-p1");

        await(() -> replica("emu-1-p0").state() == ReplicaStatus.State.READY
                && addresses().containsKey("emu-1-p0"), "the killed replica restarted and registered again");
        assertThat(replica("emu-1-p0").restarts()).isEqualTo(1);
        assertThat(replica("emu-1-p1").restarts()).isZero();
        assertThat(manager.process("emu-1-p0").orElseThrow().pid()).isNotEqualTo(first.pid());
        assertThat(addresses().get("emu-1-p0")).isEqualTo(replica("emu-1-p0").address());
    }

    @Test
    void scalesDownAndUpThenRemovesEverything() throws Exception {
        manager(RestartPolicy.ALWAYS, scheduler);
        manager.deploy(spec(emulated(), 2)).block();
        await(() -> readyCount() == 2, "two ready");
        ProcessHandle p0 = manager.process("emu-1-p0").orElseThrow();
        ProcessHandle p1 = manager.process("emu-1-p1").orElseThrow();

        Deployment one = manager.setReplicas("emu", "1", 1).block();
        assertThat(one.desiredReplicas()).isEqualTo(1);
        assertThat(addresses()).as("the scaled-away replica is unregistered at once").containsOnlyKeys("emu-1-p0");
        assertThat(p1.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS).isAlive()).isFalse();
        await(() -> deployment().replicas().size() == 1, "the drained replica gone");
        assertThat(p0.isAlive()).isTrue();

        manager.setReplicas("emu", "1", 3).block();
        await(() -> readyCount() == 3 && addresses().size() == 3, "three ready");
        assertThat(addresses()).containsOnlyKeys("emu-1-p0", "emu-1-p1", "emu-1-p2");
        assertThat(manager.process("emu-1-p0").orElseThrow().pid()).isEqualTo(p0.pid());
        List<ProcessHandle> all = deployment().replicas().stream()
                .map(r -> manager.process(r.id()).orElseThrow()).toList();

        manager.remove("emu", "1").block(WAIT);
        assertThat(registry.snapshot().replicas()).isEmpty();
        assertThat(all).noneMatch(ProcessHandle::isAlive);
        assertThat(manager.list().block()).isEmpty();
        assertThatThrownBy(() -> manager.setReplicas("emu", "1", 1).block())
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.NOT_FOUND));
    }

    @Test
    void restartPolicyNeverLeavesAKilledReplicaStopped() throws Exception {
        manager(RestartPolicy.NEVER, scheduler);
        manager.deploy(spec(emulated(), 1)).block();
        await(() -> readyCount() == 1, "ready");
        manager.process("emu-1-p0").orElseThrow().destroyForcibly();
        await(() -> replica("emu-1-p0").state() == ReplicaStatus.State.STOPPED, "stopped");
        assertThat(registry.snapshot().replicas()).isEmpty();
        assertThat(replica("emu-1-p0").restarts()).isZero();
        assertThat(manager.process("emu-1-p0")).isEmpty();
    }

    @Test
    void aCommandThatExitsAtOnceIsRestartedWithGrowingBackoff() throws Exception {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        ReadinessProbe probe = new ReadinessProbe(Duration.ofSeconds(1), Duration.ofMillis(100), clock);
        manager = new ProcessContainerManager(registry, probe, new ProcessContainerManager.Settings(WAIT,
                Duration.ofSeconds(1), 2, RestartPolicy.ON_FAILURE,
                new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(4)), Duration.ofSeconds(10),
                NO_MODEL_DIRECTORIES), clock);
        manager.deploy(spec(List.of("/bin/sh", "-c", "exit 3"), 1)).block();

        long[] expected = {1000, 2000, 4000, 4000, 4000};
        for (int k = 0; k < expected.length; k++) {
            int restarts = k;
            await(() -> replica("emu-1-p0").state() == ReplicaStatus.State.RESTARTING
                    && replica("emu-1-p0").restarts() == restarts, "exit " + k + " seen");
            clock.advanceTimeBy(Duration.ofMillis(expected[k] - 1));
            assertThat(replica("emu-1-p0").restarts()).as("no restart before %d ms", expected[k]).isEqualTo(k);
            clock.advanceTimeBy(Duration.ofMillis(1));
            assertThat(replica("emu-1-p0").restarts()).as("restart after %d ms", expected[k]).isEqualTo(k + 1);
        }
        assertThat(registry.snapshot().replicas()).isEmpty();

        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("emu", "1", null, List.of("/bin/true"), null, 1,
                null, null)).block())
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.CONFLICT));
        manager.remove("emu", "1").block(WAIT);
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("emu", "1", null,
                List.of(tmp.resolve("no-such-program").toString()), null, 1, null, null)).block())
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.INVALID));
        assertThat(manager.list().block()).isEmpty();
        assertThatThrownBy(() -> manager.deploy(new DeploymentSpec("nope", "1", null, List.of("/bin/true"), null, 1,
                null, null)).block())
                .isInstanceOfSatisfying(ContainerManagerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ContainerManagerException.Kind.NOT_FOUND));
    }

    @Test
    void aReplicaServingAnotherModelOrInputTypeIsNamedWithinSecondsNotAfterTheReadinessTimeout() throws Exception {
        manager(RestartPolicy.ALWAYS, scheduler);
        registry.addModel(new ModelVersion("wrongname", "1", List.of(), "floats", "", "", -1)).block();
        long deployed = System.nanoTime();
        manager.deploy(new DeploymentSpec("wrongname", "1", null, JavaCommand.of(tmp, EMULATED, "--name", "mylinear"),
                null, 1, null, Map.of())).block();
        await(() -> replica("wrongname-1-p0").detail() != null, "the mismatch named");
        // the container's JVM starts in seconds; the timeout it is not waited for is WAIT
        assertThat(System.nanoTime() - deployed).as("named long before the readiness timeout, %s", WAIT)
                .isLessThan(WAIT.dividedBy(4).toNanos());
        assertThat(replica("wrongname-1-p0").detail()).contains("does not serve the registered model version")
                .contains("ModelReady(wrongname, version 1)").contains("NOT_FOUND").contains("mylinear");
        assertThat(addresses()).as("never registered").isEmpty();
        manager.remove("wrongname", "1").block();

        registry.addModel(new ModelVersion("img", "1", List.of(), "bytes", "", "", -1)).block();
        manager.deploy(new DeploymentSpec("img", "1", null, emulated(), null, 1, null, Map.of())).block();
        await(() -> replica("img-1-p0").detail() != null, "the input type mismatch named");
        assertThat(replica("img-1-p0").detail()).contains("declares input 'input' FP32")
                .contains("registered with input type 'bytes'");
        assertThat(addresses()).isEmpty();
    }

    /**
     * A replica whose process is alive but whose health path is dead (SIGSTOP: every check times
     * out, and SIGTERM does not stop it) is unregistered, killed once SIGTERM failed to stop it,
     * and replaced by a new process that serves again, well within 30 s, without anyone's help.
     */
    @Test
    void aLiveReplicaTheGatewayCannotReachIsKilledAndReplaced() throws Exception {
        ReadinessProbe probe = new ReadinessProbe(Duration.ofMillis(500), Duration.ofMillis(100), scheduler);
        manager = new ProcessContainerManager(registry, probe, new ProcessContainerManager.Settings(WAIT,
                Duration.ofMillis(200), 2, RestartPolicy.ON_FAILURE,
                new Backoff(Duration.ofMillis(200), Duration.ofSeconds(2)), Duration.ofSeconds(1),
                NO_MODEL_DIRECTORIES), scheduler);
        manager.deploy(spec(emulated(), 1)).block();
        await(() -> readyCount() == 1, "ready");
        ProcessHandle frozen = manager.process("emu-1-p0").orElseThrow();

        assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(frozen.pid())).start().waitFor()).isZero();
        long cut = System.nanoTime();
        await(() -> !addresses().containsKey("emu-1-p0"), "the unreachable replica unregistered");
        assertThat(frozen.isAlive()).as("its process still there after the failed checks").isTrue();

        await(() -> replica("emu-1-p0").state() == ReplicaStatus.State.READY
                && addresses().containsKey("emu-1-p0"), "a new process ready and registered");
        assertThat(Duration.ofNanos(System.nanoTime() - cut)).as("back to full service").isLessThan(
                Duration.ofSeconds(30));
        assertThat(frozen.isAlive()).as("the stopped process was killed").isFalse();
        assertThat(replica("emu-1-p0").restarts()).isEqualTo(1);
        try (ContainerClient c = ContainerClient.connect(addresses().get("emu-1-p0"))) {
            assertThat(c.serverReady(Duration.ofSeconds(5)).get()).isTrue();
        }
        assertThat(manager.process("emu-1-p0").orElseThrow().pid()).isNotEqualTo(frozen.pid());
    }

    private Deployment deployment() {
        List<Deployment> all = manager.list().block();
        assertThat(all).hasSize(1);
        return all.get(0);
    }

    private ReplicaStatus replica(String id) {
        return deployment().replicas().stream().filter(r -> r.id().equals(id)).findFirst().orElseThrow();
    }

    private long readyCount() {
        Optional<Deployment> d = manager.list().block().stream().findFirst();
        return d.map(Deployment::readyReplicas).orElse(0L);
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
