package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.registry.RegistryException.Kind;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How every {@link Registry} stores model profiles per hardware kind and applies a pipeline
 * plan's registry part; subclasses supply a fresh, empty registry per test.
 */
abstract class ProfileRegistryContractTest {

    protected Registry registry;

    protected abstract Registry newRegistry();

    @BeforeEach
    void createRegistry() {
        registry = newRegistry();
        RegistryContractTest.ok(registry.addModel(new ModelVersion("fast", "1", List.of(), "floats", "", "", -1, null,
                "cpu-1t", 0)));
        RegistryContractTest.ok(registry.addModel(RegistryContractTest.model("cnn", "1", "floats")));
        RegistryContractTest.ok(registry.addModel(RegistryContractTest.model("cnn", "2", "floats")));
        RegistryContractTest.ok(registry.addPipeline(new Pipeline("cascade", "floats", "-1", 100_000,
                List.of(PipelineStage.model("fast", "fast", StageOutput.LOGITS),
                        PipelineStage.model("accurate", "cnn", StageOutput.LABEL)),
                List.of(new PipelineEdge("fast", "accurate",
                        new EdgeCondition(ConditionKind.CONFIDENCE_BELOW, 0.9))))));
    }

    @AfterEach
    void closeRegistry() {
        registry.close();
    }

    static ModelProfile profile(String model, String version, String hardware, double beta) {
        return new ModelProfile(model, version, hardware, model + "-" + version + "-p0", "127.0.0.1:9000",
                Instant.parse("2026-11-24T10:00:00Z"), 20, false,
                List.of(new ModelProfile.BatchLatency(1, beta + 0.5, beta + 0.9),
                        new ModelProfile.BatchLatency(2, beta + 1.0, beta + 1.4),
                        new ModelProfile.BatchLatency(4, beta + 2.0, beta + 2.6)));
    }

    @Test
    void aVersionKeepsOneProfilePerHardwareKindTheLatest() {
        ModelProfile cpu = profile("cnn", "1", "cpu-1t", 5);
        ModelProfile cuda = profile("cnn", "1", "cuda", 2);
        RegistryContractTest.ok(registry.putProfile(cpu));
        RegistryContractTest.ok(registry.putProfile(cuda));
        RegistryContractTest.ok(registry.putProfile(profile("fast", "1", "cpu-1t", 1)));
        assertThat(registry.snapshot().profiles()).extracting(ModelProfile::key)
                .containsExactly("cnn:1:cpu-1t", "cnn:1:cuda", "fast:1:cpu-1t");
        assertThat(registry.snapshot().profiles("cnn")).containsExactly(cpu, cuda);

        ModelProfile again = profile("cnn", "1", "cpu-1t", 7);
        long before = registry.snapshot().revision();
        RegistryContractTest.ok(registry.putProfile(again));
        assertThat(registry.snapshot().profiles("cnn")).containsExactly(again, cuda);
        assertThat(registry.snapshot().revision()).isGreaterThan(before);
        // storing the same profile again changes nothing
        long same = registry.snapshot().revision();
        RegistryContractTest.ok(registry.putProfile(again));
        assertThat(registry.snapshot().revision()).isEqualTo(same);
    }

    @Test
    void aProfileNeedsItsVersionAndMeasurements() {
        RegistryContractTest.refused(registry.putProfile(profile("cnn", "9", "cpu-1t", 5)), Kind.NOT_FOUND,
                "model version 'cnn:9' not found");
        RegistryContractTest.refused(registry.putProfile(new ModelProfile("cnn", "1", "cpu-1t", "r", "a",
                Instant.EPOCH, 20, false, List.of())), Kind.INVALID, "has no measurements");
        RegistryContractTest.refused(registry.putProfile(new ModelProfile("cnn", "1", "cpu-1t", "r", "a",
                Instant.EPOCH, 20, false, List.of(new ModelProfile.BatchLatency(2, 1, 1),
                        new ModelProfile.BatchLatency(1, 1, 1)))), Kind.INVALID, "batch sizes must increase");
        RegistryContractTest.refused(registry.putProfile(profile("cnn", "1", "Bad Kind", 5)), Kind.INVALID,
                "invalid hardware name");
        assertThat(registry.snapshot().profiles()).isEmpty();
    }

    @Test
    void deletingAVersionDeletesItsProfilesOnly() {
        RegistryContractTest.ok(registry.putProfile(profile("cnn", "1", "cpu-1t", 5)));
        RegistryContractTest.ok(registry.putProfile(profile("cnn", "2", "cpu-1t", 4)));
        RegistryContractTest.ok(registry.deleteVersionedModel("cnn", "1"));
        assertThat(registry.snapshot().profiles()).extracting(ModelProfile::key).containsExactly("cnn:2:cpu-1t");
    }

    @Test
    void aVersionCarriesItsHardwareKindAndBatchCap() {
        assertThat(registry.snapshot().model("fast", "1")).get()
                .satisfies(m -> {
                    assertThat(m.hardware()).isEqualTo("cpu-1t");
                    assertThat(m.maxBatchSize()).isEqualTo(ModelVersion.DEFAULT_MAX_BATCH_SIZE);
                });
        assertThat(registry.snapshot().model("cnn", "1")).get()
                .extracting(ModelVersion::hardware).isEqualTo(ModelVersion.DEFAULT_HARDWARE);
    }

    @Test
    void aPlanSetsDeadlinesAndBatchCapsInOneStep() {
        RegistryContractTest.ok(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "accurate", 70_000L),
                List.of(new PipelinePlanChange.BatchCap("fast", "1", 8),
                        new PipelinePlanChange.BatchCap("cnn", "2", 2)))));
        RegistrySnapshot s = registry.snapshot();
        PipelineGraph g = s.pipeline("cascade").orElseThrow();
        assertThat(g.planned()).isTrue();
        assertThat(g.pipeline().stages()).extracting(PipelineStage::deadlineMicros).containsExactly(20_000L, 70_000L);
        assertThat(s.model("fast", "1").orElseThrow().maxBatchSize()).isEqualTo(8);
        assertThat(s.model("fast", "1").orElseThrow().hardware()).isEqualTo("cpu-1t");
        assertThat(s.model("cnn", "2").orElseThrow().maxBatchSize()).isEqualTo(2);
        assertThat(s.model("cnn", "1").orElseThrow().maxBatchSize()).isZero();
    }

    @Test
    void aPlanIsValidatedCompletelyBeforeAnythingChanges() {
        RegistrySnapshot before = registry.snapshot();
        List<PipelinePlanChange.BatchCap> caps = List.of(new PipelinePlanChange.BatchCap("fast", "1", 8));
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("nope",
                Map.of("fast", 1L), caps)), Kind.NOT_FOUND, "pipeline 'nope' not found");
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "slow", 1L), caps)), Kind.INVALID, "has no stage 'slow'");
        // the deadlines along the path exceed the SLO of 100 ms
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 60_000L, "accurate", 60_000L), caps)), Kind.INVALID, "add up to");
        // a plan gives every model stage a deadline
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L), caps)), Kind.INVALID, "every model stage");
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "accurate", 70_000L), List.of(new PipelinePlanChange.BatchCap("fast", "1", 8),
                        new PipelinePlanChange.BatchCap("cnn", "7", 2)))), Kind.NOT_FOUND,
                "model version 'cnn:7' not found");
        RegistryContractTest.refused(registry.applyPipelinePlan(new PipelinePlanChange("cascade",
                Map.of("fast", 20_000L, "accurate", 70_000L), List.of(new PipelinePlanChange.BatchCap("fast", "1", 0)))),
                Kind.INVALID, "max batch size must be >= 1");
        RegistrySnapshot after = registry.snapshot();
        assertThat(after.revision()).isEqualTo(before.revision());
        assertThat(after.pipelines()).isEqualTo(before.pipelines());
        assertThat(after.models()).isEqualTo(before.models());
    }
}
