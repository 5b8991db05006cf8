package io.servegate.gateway.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** The structural and type rules of pipeline graphs, and their JSON form. */
class PipelineGraphTest {

    private static final EdgeCondition UNSURE = new EdgeCondition(ConditionKind.CONFIDENCE_BELOW, 0.9);

    private static Pipeline pipeline(List<PipelineStage> stages, List<PipelineEdge> edges) {
        return new Pipeline("p", "floats", "-1", 100_000, stages, edges);
    }

    private static PipelineStage model(String name, StageOutput output) {
        return PipelineStage.model(name, "m-" + name, output);
    }

    private static void refused(Pipeline p, String... messageParts) {
        assertThatThrownBy(() -> PipelineGraph.of(p)).isInstanceOf(RegistryException.class)
                .satisfies(e -> assertThat(((RegistryException) e).kind()).isEqualTo(RegistryException.Kind.INVALID))
                .hasMessageContainingAll(messageParts);
    }

    @Test
    void aCascadeIsOrderedWithItsFinalStageLast() {
        PipelineGraph g = PipelineGraph.of(pipeline(
                List.of(model("accurate", StageOutput.LABEL), model("fast", StageOutput.LOGITS)),
                List.of(new PipelineEdge("fast", "accurate", UNSURE))));
        assertThat(g.order()).extracting(PipelineStage::name).containsExactly("fast", "accurate");
        assertThat(g.incoming("accurate")).hasSize(1);
        assertThat(g.modelInputTypes()).containsEntry("m-fast", "floats").containsEntry("m-accurate", "floats");
        assertThat(g.planned()).isFalse();
    }

    @Test
    void cyclesAreRefusedNamingTheStagesOnThem() {
        refused(pipeline(List.of(model("a", StageOutput.LABEL), model("b", StageOutput.LABEL),
                        model("c", StageOutput.LABEL), model("d", StageOutput.LABEL)),
                List.of(new PipelineEdge("a", "b"), new PipelineEdge("b", "c"), new PipelineEdge("c", "b"),
                        new PipelineEdge("c", "d"))),
                "cycle", "b -> c -> b");
        refused(pipeline(List.of(model("a", StageOutput.LABEL)), List.of(new PipelineEdge("a", "a"))),
                "'a' -> 'a'", "cycle");
    }

    @Test
    void edgesMustJoinExistingStagesOnce() {
        refused(pipeline(List.of(model("a", StageOutput.LABEL)), List.of(new PipelineEdge("a", "ghost"))),
                "'a' -> 'ghost'", "does not exist");
        refused(pipeline(List.of(model("a", StageOutput.LABEL), model("b", StageOutput.LABEL)),
                List.of(new PipelineEdge("a", "b"), new PipelineEdge("a", "b"))), "listed twice");
    }

    @Test
    void exactlyOneStageIsFinal() {
        refused(pipeline(List.of(model("a", StageOutput.LABEL), model("b", StageOutput.LABEL)), List.of()),
                "exactly one stage must have no outgoing edges", "[a, b]");
    }

    @Test
    void aConditionNeedsAConfidenceToTestAndAThresholdInRange() {
        refused(pipeline(List.of(model("a", StageOutput.LABEL), model("b", StageOutput.LABEL)),
                List.of(new PipelineEdge("a", "b", UNSURE))), "tests the confidence of stage 'a'", "'label'");
        refused(pipeline(List.of(model("a", StageOutput.LOGITS), model("b", StageOutput.LABEL)),
                List.of(new PipelineEdge("a", "b", new EdgeCondition(ConditionKind.CONFIDENCE_BELOW, 1.5)))),
                "threshold in [0, 1]");
    }

    @Test
    void typesMustMatchAlongTheEdges() {
        // a stage fed its predecessor's output needs an output that feeds a model
        refused(pipeline(List.of(model("a", StageOutput.LABEL), new PipelineStage("b", "m-b", null,
                        StageInput.PREVIOUS, StageOutput.LABEL, 0)), List.of(new PipelineEdge("a", "b"))),
                "stage 'b' takes the output of 'a'", "can feed no model");
        // ... and exactly one predecessor
        refused(pipeline(List.of(new PipelineStage("b", "m-b", null, StageInput.PREVIOUS, StageOutput.LABEL, 0)),
                List.of()), "needs exactly one incoming edge, has 0");
        // the same model cannot be given two types
        refused(pipeline(List.of(PipelineStage.model("a", "shared", StageOutput.INTS),
                        new PipelineStage("b", "shared", null, StageInput.PREVIOUS, StageOutput.LABEL, 0)),
                List.of(new PipelineEdge("a", "b"))), "model 'shared' would be given 'floats'", "'ints'");
        // a combine stage joins labels of at least two stages
        refused(pipeline(List.of(model("a", StageOutput.FLOATS), model("b", StageOutput.LABEL),
                        PipelineStage.combine("vote", CombineKind.MAJORITY)),
                List.of(new PipelineEdge("a", "vote"), new PipelineEdge("b", "vote"))),
                "combine stage 'vote' joins labels", "'a' answers 'floats'");
        refused(pipeline(List.of(model("a", StageOutput.LABEL), PipelineStage.combine("vote", CombineKind.MAJORITY)),
                List.of(new PipelineEdge("a", "vote"))), "needs at least two incoming edges");

        PipelineGraph chain = PipelineGraph.of(pipeline(List.of(model("embed", StageOutput.INTS),
                new PipelineStage("classify", "m-classify", null, StageInput.PREVIOUS, StageOutput.LABEL, 0)),
                List.of(new PipelineEdge("embed", "classify"))));
        assertThat(chain.modelInputTypes()).containsEntry("m-embed", "floats").containsEntry("m-classify", "ints");
    }

    @Test
    void aPlanIsAllOrNothingAndFitsTheSlo() {
        refused(pipeline(List.of(new PipelineStage("a", "m-a", null, null, StageOutput.LOGITS, 30_000),
                        model("b", StageOutput.LABEL)), List.of(new PipelineEdge("a", "b", UNSURE))),
                "1 of 2 have one");
        refused(pipeline(List.of(new PipelineStage("a", "m-a", null, null, StageOutput.LOGITS, 60_000),
                        new PipelineStage("b", "m-b", null, null, StageOutput.LABEL, 50_000)),
                List.of(new PipelineEdge("a", "b", UNSURE))), "up to stage 'b' add up to 110000", "100000");
        assertThat(PipelineGraph.of(pipeline(List.of(
                new PipelineStage("a", "m-a", null, null, StageOutput.LOGITS, 60_000),
                new PipelineStage("b", "m-b", null, null, StageOutput.LABEL, 40_000)),
                List.of(new PipelineEdge("a", "b", UNSURE)))).planned()).isTrue();
    }

    @Test
    void namesAndStagesAreChecked() {
        refused(pipeline(List.of(), List.of()), "1 to 64 stages");
        refused(pipeline(List.of(model("a", StageOutput.LABEL), model("a", StageOutput.LABEL)), List.of()),
                "two stages are named 'a'");
        refused(pipeline(List.of(new PipelineStage("a", "m", CombineKind.MAJORITY, null, null, 0)), List.of()),
                "exactly one of a model and a combine step");
        refused(new Pipeline("p", "floats", "-1", 0, List.of(model("a", StageOutput.LABEL)), List.of()),
                "latency SLO must be > 0");
    }

    @Test
    void theJsonFormRoundTripsAndRefusesUnknownFields() {
        JsonMapper mapper = JsonMapper.builder().build();
        Pipeline p = new Pipeline("cascade", "floats", "-1", 100_000, List.of(
                new PipelineStage("fast", "fmnist-logreg", null, null, StageOutput.LOGITS, 20_000),
                new PipelineStage("accurate", "fmnist-cnn", null, null, null, 80_000)),
                List.of(new PipelineEdge("fast", "accurate", UNSURE)));
        assertThat(PipelineJson.read(PipelineJson.write(p))).isEqualTo(p);
        assertThat(PipelineJson.read(PipelineJson.text(p))).isEqualTo(p);

        assertThatThrownBy(() -> PipelineJson.read(mapper.readTree("""
                {"name": "c", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 1000,
                 "stages": [{"name": "a", "model": "m"}, {"name": "b", "model": "n"}],
                 "edges": [{"from": "a", "to": "b", "if": {"confidence_below": 0.9}}]}""")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown field 'edges[0].if'");
        assertThatThrownBy(() -> PipelineJson.read(mapper.readTree("""
                {"name": "c", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 1000,
                 "stages": [{"name": "a", "model": "m", "output": "probabilities"}]}""")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll("stages[0]", "'output' must be one of label, logits");
        assertThatThrownBy(() -> PipelineJson.read(mapper.readTree("""
                {"name": "c", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 1000,
                 "stages": [{"name": "a", "model": "m"}, {"name": "b", "model": "n"}],
                 "edges": [{"from": "a", "to": "b", "when": {"confidence_over": 0.9}}]}""")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll("edges[0].when", "confidence_below, confidence_at_least");
    }
}
