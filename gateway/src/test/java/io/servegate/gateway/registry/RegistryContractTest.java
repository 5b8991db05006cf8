package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.gateway.registry.RegistryException.Kind;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The behaviour every {@link Registry} implementation must have; subclasses supply a fresh, empty
 * registry per test.
 */
abstract class RegistryContractTest {

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    protected Registry registry;

    /** @return a new, empty registry (closed by the test) */
    protected abstract Registry newRegistry();

    @BeforeEach
    void createRegistry() {
        registry = newRegistry();
    }

    @AfterEach
    void closeRegistry() {
        registry.close();
    }

    // ------------------------------------------------------------------ helpers

    static Application app(String name, String inputType, String... links) {
        return new Application(name, inputType, "-1", 20_000, List.of(links));
    }

    static ModelVersion model(String name, String version, String inputType) {
        return new ModelVersion(name, version, List.of("label-" + version), inputType, "servegate/noop:latest",
                "/models/" + name + "/" + version, ModelVersion.ADAPTIVE_BATCH_SIZE);
    }

    static ContainerReplica replica(String id, String model, String version) {
        return new ContainerReplica(id, model, version, "127.0.0.1:" + (7000 + Math.abs(id.hashCode() % 1000)));
    }

    static void ok(Mono<Void> write) {
        write.block(TIMEOUT);
    }

    static void refused(Mono<Void> write, Kind kind, String... messageParts) {
        assertThatThrownBy(() -> write.block(TIMEOUT))
                .isInstanceOfSatisfying(RegistryException.class, e -> {
                    assertThat(e.kind()).as("kind of: %s", e.getMessage()).isEqualTo(kind);
                    if (messageParts.length > 0) {
                        assertThat(e.getMessage()).contains(messageParts);
                    }
                });
    }

    RegistrySnapshot snap() {
        return registry.snapshot();
    }

    long revision() {
        return registry.snapshot().revision();
    }

    // ------------------------------------------------------------------ apps

    @Test
    void startsEmpty() {
        RegistrySnapshot s = snap();
        assertThat(s.apps()).isEmpty();
        assertThat(s.models()).isEmpty();
        assertThat(s.replicas()).isEmpty();
        assertThat(s.app("nope")).isEmpty();
        assertThat(s.model("m", "1")).isEmpty();
        assertThat(s.currentVersion("m")).isEmpty();
        assertThat(s.replicas("m", "1")).isEmpty();
    }

    @Test
    void addAppIsVisibleAndSecondAddConflicts() {
        long r0 = revision();
        Application a = new Application("sum", "doubles", "0.0", 100_000, List.of());
        ok(registry.addApp(a));
        assertThat(snap().app("sum")).contains(a);
        assertThat(revision()).isGreaterThan(r0);

        long r1 = revision();
        refused(registry.addApp(app("sum", "ints")), Kind.CONFLICT, "sum");
        assertThat(snap().app("sum")).contains(a);
        assertThat(revision()).isEqualTo(r1);
    }

    @Test
    void appPriorityAndWeightRoundTrip() {
        Application a = new Application("tiered", "doubles", "0.0", 100_000, List.of(), null, null, null,
                io.servegate.core.scheduling.Priority.SHEDDABLE, 7);
        ok(registry.addApp(a));
        assertThat(snap().app("tiered")).contains(a);
        assertThat(snap().app("tiered").orElseThrow().tenant())
                .isEqualTo(new io.servegate.core.scheduling.Tenant("tiered", io.servegate.core.scheduling.Priority.SHEDDABLE, 7));
    }

    @Test
    void appsAreSortedByName() {
        ok(registry.addApp(app("zeta", "ints")));
        ok(registry.addApp(app("alpha", "ints")));
        ok(registry.addApp(app("mid", "floats")));
        assertThat(snap().apps()).extracting(Application::name).containsExactly("alpha", "mid", "zeta");
    }

    @Test
    void addAppWithUnknownLinkedModelIsNotFoundAndChangesNothing() {
        ok(registry.addModel(model("known", "1", "ints")));
        long r = revision();
        refused(registry.addApp(app("a", "ints", "known", "ghost")), Kind.NOT_FOUND, "ghost");
        assertThat(snap().app("a")).isEmpty();
        assertThat(revision()).isEqualTo(r);
    }

    @Test
    void addAppWithLinkedModelOfOtherInputTypeIsInvalid() {
        ok(registry.addModel(model("m", "1", "floats")));
        refused(registry.addApp(app("a", "ints", "m")), Kind.INVALID, "m", "floats", "ints");
        assertThat(snap().app("a")).isEmpty();
    }

    @Test
    void addAppKeepsLinkOrderAndDropsDuplicates() {
        ok(registry.addModel(model("m2", "1", "ints")));
        ok(registry.addModel(model("m1", "1", "ints")));
        ok(registry.addApp(app("a", "ints", "m2", "m1", "m2")));
        assertThat(snap().app("a").orElseThrow().linkedModels()).containsExactly("m2", "m1");
    }

    @Test
    void deleteAppRemovesItAndMissingAppIsNotFound() {
        ok(registry.addApp(app("a", "ints")));
        long r = revision();
        ok(registry.deleteApp("a"));
        assertThat(snap().app("a")).isEmpty();
        assertThat(snap().apps()).isEmpty();
        assertThat(revision()).isGreaterThan(r);
        refused(registry.deleteApp("a"), Kind.NOT_FOUND, "a");
    }

    @Test
    void deletedAppCanBeAddedAgainWithoutOldLinks() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addApp(app("a", "ints", "m")));
        ok(registry.deleteApp("a"));
        ok(registry.addApp(app("a", "ints")));
        assertThat(snap().app("a").orElseThrow().linkedModels()).isEmpty();
    }

    @Test
    void invalidArgumentsAreRefusedAsInvalid() {
        refused(registry.addApp(app("Bad", "ints")), Kind.INVALID, "lower case");
        refused(registry.addApp(app("a:b", "ints")), Kind.INVALID, "':'");
        refused(registry.addApp(app("a", "tensors")), Kind.INVALID, "tensors");
        refused(registry.addApp(new Application("a", "ints", "x", 0, List.of())), Kind.INVALID, "SLO");
        refused(registry.addApp(new Application("a", "ints", null, 10, List.of())), Kind.INVALID, "default output");
        refused(registry.addModel(model("m", "1/2", "ints")), Kind.INVALID, "version");
        refused(registry.addModel(new ModelVersion("m", "1", List.of(), "ints", "c", "/p", 0)), Kind.INVALID,
                "batch size");
        refused(registry.addReplica(new ContainerReplica("", "m", "1", "h:1")), Kind.INVALID, "replica id");
        refused(registry.addApp(null), Kind.INVALID);
        assertThat(revision()).isZero();
        assertThat(snap().apps()).isEmpty();
    }

    // ------------------------------------------------------------------ models and versions

    @Test
    void addModelBecomesCurrentAndDuplicateConflicts() {
        ModelVersion v1 = model("m", "1", "doubles");
        ok(registry.addModel(v1));
        assertThat(snap().model("m", "1")).contains(v1);
        assertThat(snap().currentVersion("m")).contains("1");

        ok(registry.addModel(model("m", "2", "doubles")));
        assertThat(snap().currentVersion("m")).contains("2");

        long r = revision();
        refused(registry.addModel(model("m", "1", "doubles")), Kind.CONFLICT, "m:1");
        assertThat(snap().currentVersion("m")).contains("2");
        assertThat(revision()).isEqualTo(r);
    }

    @Test
    void modelFieldsRoundTrip() {
        ModelVersion fixed = new ModelVersion("img", "v1.0", List.of("prod", "cnn"), "bytes", null, null, 16);
        ok(registry.addModel(fixed));
        assertThat(snap().model("img", "v1.0")).contains(fixed);
        assertThat(snap().versions("img")).containsExactly(fixed);
    }

    @Test
    void allVersionsOfAModelShareItsInputType() {
        ok(registry.addModel(model("m", "1", "ints")));
        refused(registry.addModel(model("m", "2", "floats")), Kind.INVALID, "ints", "floats");
        assertThat(snap().model("m", "2")).isEmpty();
        assertThat(snap().currentVersion("m")).contains("1");
    }

    @Test
    void setModelVersionSwitchesCurrentAndMissingVersionIsNotFound() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addModel(model("m", "2", "ints")));
        long r = revision();
        ok(registry.setModelVersion("m", "1"));
        assertThat(snap().currentVersion("m")).contains("1");
        assertThat(revision()).isGreaterThan(r);

        long r2 = revision();
        ok(registry.setModelVersion("m", "1")); // already current: no change
        assertThat(revision()).isEqualTo(r2);

        refused(registry.setModelVersion("m", "3"), Kind.NOT_FOUND, "m:3");
        refused(registry.setModelVersion("other", "1"), Kind.NOT_FOUND, "other:1");
        assertThat(snap().currentVersion("m")).contains("1");
    }

    @Test
    void deletingTheCurrentVersionPromotesTheHighestRemainingNumerically() {
        ok(registry.addModel(model("m", "10", "ints")));
        ok(registry.addModel(model("m", "9", "ints")));
        ok(registry.addModel(model("m", "2", "ints")));
        assertThat(snap().currentVersion("m")).contains("2");

        ok(registry.deleteVersionedModel("m", "2"));
        assertThat(snap().currentVersion("m")).contains("10"); // not "9": numeric-aware
        ok(registry.deleteVersionedModel("m", "10"));
        assertThat(snap().currentVersion("m")).contains("9");
        ok(registry.deleteVersionedModel("m", "9"));
        assertThat(snap().currentVersion("m")).isEmpty();
        assertThat(snap().models()).isEmpty();
    }

    @Test
    void deletingAVersionWithMixedNamesPromotesByNaturalOrder() {
        ok(registry.addModel(model("m", "v1.9", "ints")));
        ok(registry.addModel(model("m", "v1.10", "ints")));
        ok(registry.addModel(model("m", "v1.2-rc1", "ints")));
        ok(registry.addModel(model("m", "x", "ints")));
        ok(registry.deleteVersionedModel("m", "x"));
        assertThat(snap().currentVersion("m")).contains("v1.10");
    }

    @Test
    void deletingANonCurrentVersionKeepsCurrent() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addModel(model("m", "2", "ints")));
        ok(registry.deleteVersionedModel("m", "1"));
        assertThat(snap().currentVersion("m")).contains("2");
        assertThat(snap().model("m", "1")).isEmpty();
        refused(registry.deleteVersionedModel("m", "1"), Kind.NOT_FOUND, "m:1");
        refused(registry.deleteVersionedModel("nope", "1"), Kind.NOT_FOUND, "nope:1");
    }

    @Test
    void modelsAreSortedByNameThenVersion() {
        ok(registry.addModel(model("b", "10", "ints")));
        ok(registry.addModel(model("b", "9", "ints")));
        ok(registry.addModel(model("a", "1", "floats")));
        assertThat(snap().models()).extracting(m -> m.name() + ":" + m.version())
                .containsExactly("a:1", "b:9", "b:10");
        assertThat(snap().versions("b")).extracting(ModelVersion::version).containsExactly("9", "10");
    }

    @Test
    void deletingAVersionRemovesItsReplicasOnly() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addModel(model("m", "2", "ints")));
        ok(registry.addReplica(replica("r1", "m", "1")));
        ok(registry.addReplica(replica("r2", "m", "1")));
        ok(registry.addReplica(replica("r3", "m", "2")));
        ok(registry.deleteVersionedModel("m", "1"));
        assertThat(snap().replicas("m", "1")).isEmpty();
        assertThat(snap().replicas()).extracting(ContainerReplica::id).containsExactly("r3");
        assertThat(snap().replicas("m", "2")).containsExactly(replica("r3", "m", "2"));
    }

    // ------------------------------------------------------------------ links

    @Test
    void addModelLinksAppendsAndIsIdempotent() {
        ok(registry.addModel(model("m1", "1", "ints")));
        ok(registry.addModel(model("m2", "1", "ints")));
        ok(registry.addModel(model("m3", "1", "ints")));
        ok(registry.addApp(app("a", "ints", "m2")));
        ok(registry.addModelLinks("a", List.of("m3", "m1")));
        assertThat(snap().app("a").orElseThrow().linkedModels()).containsExactly("m2", "m3", "m1");

        long r = revision();
        ok(registry.addModelLinks("a", List.of("m1", "m2")));
        assertThat(snap().app("a").orElseThrow().linkedModels()).containsExactly("m2", "m3", "m1");
        assertThat(revision()).isEqualTo(r);
    }

    @Test
    void addModelLinksRefusesMissingAppOrModelAndTypeMismatchAllOrNothing() {
        ok(registry.addModel(model("ok", "1", "ints")));
        ok(registry.addModel(model("floaty", "1", "floats")));
        ok(registry.addApp(app("a", "ints")));
        long r = revision();
        refused(registry.addModelLinks("ghost-app", List.of("ok")), Kind.NOT_FOUND, "ghost-app");
        refused(registry.addModelLinks("a", List.of("ok", "ghost")), Kind.NOT_FOUND, "ghost");
        refused(registry.addModelLinks("a", List.of("ok", "floaty")), Kind.INVALID, "floaty", "floats", "ints");
        assertThat(snap().app("a").orElseThrow().linkedModels()).isEmpty();
        assertThat(revision()).isEqualTo(r);
    }

    @Test
    void deleteModelLinksRemovesLinkedAndIgnoresOthers() {
        ok(registry.addModel(model("m1", "1", "ints")));
        ok(registry.addModel(model("m2", "1", "ints")));
        ok(registry.addApp(app("a", "ints", "m1", "m2")));
        ok(registry.deleteModelLinks("a", List.of("m1", "never-linked")));
        assertThat(snap().app("a").orElseThrow().linkedModels()).containsExactly("m2");

        long r = revision();
        ok(registry.deleteModelLinks("a", List.of("never-linked")));
        assertThat(revision()).isEqualTo(r);

        ok(registry.deleteModelLinks("a", List.of("m2")));
        assertThat(snap().app("a").orElseThrow().linkedModels()).isEmpty();
        refused(registry.deleteModelLinks("ghost", List.of("m1")), Kind.NOT_FOUND, "ghost");
    }

    @Test
    void linksSurviveDeletingAllVersionsAndConstrainTheNextVersion() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addApp(app("a", "ints", "m")));
        ok(registry.deleteVersionedModel("m", "1"));
        assertThat(snap().app("a").orElseThrow().linkedModels()).containsExactly("m");
        assertThat(snap().currentVersion("m")).isEmpty();

        refused(registry.addModel(model("m", "2", "floats")), Kind.INVALID, "a", "ints", "floats");
        ok(registry.addModel(model("m", "2", "ints")));
        assertThat(snap().currentVersion("m")).contains("2");
    }

    // ------------------------------------------------------------------ replicas

    @Test
    void addReplicaNeedsAnExistingVersionAndSameIdReplaces() {
        refused(registry.addReplica(replica("r1", "m", "1")), Kind.NOT_FOUND, "m:1");
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addModel(model("m", "2", "ints")));
        ok(registry.addReplica(replica("r1", "m", "1")));
        assertThat(snap().replicas("m", "1")).containsExactly(replica("r1", "m", "1"));

        long r = revision();
        ok(registry.addReplica(replica("r1", "m", "1"))); // identical: no change
        assertThat(revision()).isEqualTo(r);

        ContainerReplica moved = new ContainerReplica("r1", "m", "2", "10.0.0.9:7001");
        ok(registry.addReplica(moved));
        assertThat(revision()).isGreaterThan(r);
        assertThat(snap().replicas("m", "1")).isEmpty();
        assertThat(snap().replicas("m", "2")).containsExactly(moved);
        assertThat(snap().replicas()).containsExactly(moved);
    }

    @Test
    void removeReplicaRemovesAndIsANoOpWhenAbsent() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addReplica(replica("r2", "m", "1")));
        ok(registry.addReplica(replica("r1", "m", "1")));
        assertThat(snap().replicas("m", "1")).extracting(ContainerReplica::id).containsExactly("r1", "r2");
        ok(registry.removeReplica("r1"));
        assertThat(snap().replicas()).extracting(ContainerReplica::id).containsExactly("r2");

        long r = revision();
        ok(registry.removeReplica("r1"));
        ok(registry.removeReplica("never-there"));
        assertThat(revision()).isEqualTo(r);
    }

    // ------------------------------------------------------------------ snapshots, revisions, listeners

    @Test
    void everyChangeIncreasesTheRevision() {
        long last = revision();
        List<Mono<Void>> writes = List.of(
                registry.addModel(model("m", "1", "ints")),
                registry.addModel(model("m", "2", "ints")),
                registry.setModelVersion("m", "1"),
                registry.addApp(app("a", "ints")),
                registry.addModelLinks("a", List.of("m")),
                registry.addReplica(replica("r", "m", "1")),
                registry.removeReplica("r"),
                registry.deleteModelLinks("a", List.of("m")),
                registry.deleteVersionedModel("m", "2"),
                registry.deleteApp("a"));
        for (Mono<Void> w : writes) {
            ok(w);
            assertThat(revision()).isGreaterThan(last);
            last = revision();
        }
    }

    @Test
    void writesAreLazyUntilSubscribed() {
        Mono<Void> pending = registry.addApp(app("lazy", "ints"));
        assertThat(snap().app("lazy")).isEmpty();
        ok(pending);
        assertThat(snap().app("lazy")).isPresent();
    }

    @Test
    void snapshotsAreImmutable() {
        ok(registry.addModel(model("m", "1", "ints")));
        ok(registry.addApp(app("a", "ints", "m")));
        RegistrySnapshot before = snap();
        ok(registry.deleteApp("a"));
        assertThat(before.app("a")).isPresent();
        assertThat(snap().app("a")).isEmpty();
        assertThatThrownBy(() -> before.apps().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> before.models().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> before.app("a").orElseThrow().linkedModels().clear())
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void listenersSeeEachChange() throws InterruptedException {
        LinkedBlockingQueue<RegistrySnapshot> seen = new LinkedBlockingQueue<>();
        registry.addListener(seen::add);
        registry.addListener(s -> {
            throw new IllegalStateException("a failing listener must not stop the others");
        });

        ok(registry.addModel(model("m", "1", "ints")));
        RegistrySnapshot first = seen.poll(5, TimeUnit.SECONDS);
        assertThat(first).isNotNull();
        assertThat(first.model("m", "1")).isPresent();

        ok(registry.addApp(app("a", "ints", "m")));
        RegistrySnapshot second = seen.poll(5, TimeUnit.SECONDS);
        assertThat(second).isNotNull();
        assertThat(second.app("a")).isPresent();
        assertThat(second.revision()).isGreaterThan(first.revision());

        // a refused write and a no-op write notify nobody
        refused(registry.addApp(app("a", "ints")), Kind.CONFLICT);
        ok(registry.removeReplica("none"));
        assertThat(seen.poll(300, TimeUnit.MILLISECONDS)).isNull();
        assertThat(registry.snapshot().revision()).isEqualTo(second.revision());
    }

    @Test
    void namesWithAllowedPunctuationWork() {
        String[] names = {"a", "model-1", "m.v2", "snake_case", "0"};
        for (String n : names) {
            ok(registry.addModel(model(n, "1.0.0", "strings")));
        }
        ok(registry.addApp(app("app.x_y-z", "strings", names)));
        assertThat(snap().app("app.x_y-z").orElseThrow().linkedModels()).containsExactly(names);
        assertThat(snap().models()).hasSize(names.length);
        assertThat(Arrays.stream(names).map(n -> snap().currentVersion(n).orElse(null))).containsOnly("1.0.0");
    }
}
