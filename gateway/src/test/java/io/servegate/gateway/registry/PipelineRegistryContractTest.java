package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.registry.RegistryException.Kind;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How every {@link Registry} stores pipelines; subclasses supply a fresh, empty registry per test. */
abstract class PipelineRegistryContractTest {

    protected Registry registry;

    protected abstract Registry newRegistry();

    @BeforeEach
    void createRegistry() {
        registry = newRegistry();
        RegistryContractTest.ok(registry.addModel(RegistryContractTest.model("fast", "1", "floats")));
        RegistryContractTest.ok(registry.addModel(RegistryContractTest.model("cnn", "1", "floats")));
        RegistryContractTest.ok(registry.addModel(RegistryContractTest.model("words", "1", "strings")));
    }

    @AfterEach
    void closeRegistry() {
        registry.close();
    }

    private static Pipeline cascade(String name, String accurateModel) {
        return new Pipeline(name, "floats", "-1", 100_000,
                List.of(PipelineStage.model("fast", "fast", StageOutput.LOGITS),
                        PipelineStage.model("accurate", accurateModel, StageOutput.LABEL)),
                List.of(new PipelineEdge("fast", "accurate",
                        new EdgeCondition(ConditionKind.CONFIDENCE_BELOW, 0.9))));
    }

    @Test
    void aPipelineIsStoredReadBackAndDeleted() {
        Pipeline p = cascade("cascade", "cnn");
        RegistryContractTest.ok(registry.addPipeline(p));
        RegistrySnapshot s = registry.snapshot();
        assertThat(s.pipelines()).containsExactly(p);
        assertThat(s.pipeline("cascade")).get().satisfies(g -> {
            assertThat(g.pipeline()).isEqualTo(p);
            assertThat(g.order()).extracting(PipelineStage::name).containsExactly("fast", "accurate");
        });
        RegistryContractTest.refused(registry.addPipeline(p), Kind.CONFLICT, "pipeline 'cascade' already exists");
        RegistryContractTest.ok(registry.deletePipeline("cascade"));
        assertThat(registry.snapshot().pipeline("cascade")).isEmpty();
        RegistryContractTest.refused(registry.deletePipeline("cascade"), Kind.NOT_FOUND, "pipeline 'cascade' not found");
    }

    @Test
    void aPipelinesPriorityAndWeightAreStoredAndMakeItsTenant() {
        Pipeline c = cascade("cascade", "cnn");
        Pipeline p = new Pipeline(c.name(), c.inputType(), c.defaultOutput(), c.latencySloMicros(), c.stages(),
                c.edges(), Priority.CRITICAL, 3);
        RegistryContractTest.ok(registry.addPipeline(p));
        Pipeline stored = registry.snapshot().pipeline("cascade").orElseThrow().pipeline();
        assertThat(stored).isEqualTo(p);
        assertThat(stored.asApplication().tenant())
                .isEqualTo(new Tenant("cascade", Priority.CRITICAL, 3));
        assertThat(PipelineJson.read(PipelineJson.write(stored))).isEqualTo(p);
    }

    @Test
    void stageModelsMustExistAndTakeWhatTheStageGives() {
        RegistryContractTest.refused(registry.addPipeline(cascade("c1", "ghost")), Kind.NOT_FOUND,
                "model 'ghost' not found");
        RegistryContractTest.refused(registry.addPipeline(cascade("c2", "words")), Kind.INVALID,
                "model 'words' takes 'strings' but pipeline 'c2' gives it 'floats'");
        assertThat(registry.snapshot().pipelines()).isEmpty();
    }

    @Test
    void aBadGraphIsRefusedBeforeAnythingIsStored() {
        Pipeline cyclic = new Pipeline("loop", "floats", "-1", 100_000,
                List.of(PipelineStage.model("a", "fast", StageOutput.LABEL),
                        PipelineStage.model("b", "cnn", StageOutput.LABEL)),
                List.of(new PipelineEdge("a", "b"), new PipelineEdge("b", "a")));
        RegistryContractTest.refused(registry.addPipeline(cyclic), Kind.INVALID, "cycle");
        assertThat(registry.snapshot().pipelines()).isEmpty();
    }

    @Test
    void appsAndPipelinesShareOneNameSpace() {
        RegistryContractTest.ok(registry.addApp(RegistryContractTest.app("shop", "floats", "cnn")));
        RegistryContractTest.refused(registry.addPipeline(cascade("shop", "cnn")), Kind.CONFLICT,
                "an app named 'shop' exists");
        RegistryContractTest.ok(registry.addPipeline(cascade("cascade", "cnn")));
        RegistryContractTest.refused(registry.addApp(RegistryContractTest.app("cascade", "floats")), Kind.CONFLICT,
                "a pipeline named 'cascade' exists");
    }

    @Test
    void aPipelineStaysWhenItsModelsVersionsAreDeleted() {
        RegistryContractTest.ok(registry.addPipeline(cascade("cascade", "cnn")));
        RegistryContractTest.ok(registry.deleteVersionedModel("cnn", "1"));
        assertThat(registry.snapshot().pipeline("cascade")).isPresent();
        assertThat(registry.snapshot().currentVersion("cnn")).isEmpty();
    }
}
