package io.servegate.sim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.servegate.sim.latency.HardwareCosts;
import io.servegate.sim.latency.ModelProfiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pipeline, profile and cost files: what they accept, and what they reject with the reason. */
class PipelineSpecTest {

    @TempDir
    Path dir;

    private static PipelineSpec parse(String json) throws Exception {
        return PipelineSpec.parse(new ObjectMapper().readTree(json));
    }

    @Test
    void stagesComeInTopologicalOrderWithDefaults() throws Exception {
        PipelineSpec s = parse("""
                {"name": "p", "slo_ms": 40,
                 "stages": [{"name": "c", "model": "mc"}, {"name": "a", "model": "ma"}, {"name": "b", "model": "mb"}],
                 "edges": [{"from": "a", "to": "c"}, {"from": "b", "to": "c", "probability": 0.5}, {"from": "a", "to": "b"}]}
                """);
        assertThat(s.stages()).extracting(PipelineStage::name).containsExactly("a", "b", "c");
        assertThat(s.edges()).extracting(PipelineEdge::probability).containsExactly(1.0, 0.5, 1.0);
        assertThat(s.sloMs()).isEqualTo(40);
        assertThat(s.longestPath(i -> i + 1)).isEqualTo(6); // a(1) -> b(2) -> c(3)
        assertThat(parse("{\"stages\": [{\"name\": \"x\", \"model\": \"m\"}]}").sloMs()).isNaN();
    }

    /** A gateway add_pipeline body, with the probability of its condition, is a pipeline file. */
    @Test
    void aGatewayDefinitionReadsAsItIs() throws Exception {
        PipelineSpec s = parse("""
                {"name": "fashion-cascade", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "stages": [{"name": "fast", "model": "fmnist-logreg", "output": "logits", "deadline_micros": 20000},
                            {"name": "accurate", "model": "fmnist-cnn", "input": "query"}],
                 "edges": [{"from": "fast", "to": "accurate", "when": {"confidence_below": 0.95}, "probability": 0.3}]}
                """);
        assertThat(s.sloMs()).isEqualTo(100);
        assertThat(s.edges()).containsExactly(new PipelineEdge("fast", "accurate", 0.3));
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}, {"name": "b", "model": "m"}],
                 "edges": [{"from": "a", "to": "b", "when": {"confidence_below": 0.9}}]}"""))
                .hasMessageContaining("has a condition: give the probability");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}, {"name": "v", "combine": "majority"}]}"""))
                .hasMessageContaining("combine step");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}], "edges": [], "slo_ms": 5, "latency_slo_micros": 5000}"""))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}], "edges": [{"from": "a", "to": "a", "if": 1}]}"""))
                .hasMessageContaining("unknown edge field 'if'");
    }

    @Test
    void badPipelinesAreRejectedWithTheReason() {
        assertThatThrownBy(() -> parse("{\"stages\": []}")).hasMessageContaining("at least one stage");
        assertThatThrownBy(() -> parse("{\"stages\": [{\"name\": \"a\"}]}")).hasMessageContaining("'model'");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}, {"name": "a", "model": "m"}]}""")).hasMessageContaining("two stages");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}], "edges": [{"from": "a", "to": "z"}]}"""))
                .hasMessageContaining("no stage 'z'");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}, {"name": "b", "model": "m"}],
                 "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}]}""")).hasMessageContaining("cycle");
        assertThatThrownBy(() -> parse("""
                {"stages": [{"name": "a", "model": "m"}, {"name": "b", "model": "m"}],
                 "edges": [{"from": "a", "to": "b", "probability": 1.5}]}""")).hasMessageContaining("probability");
        assertThatThrownBy(() -> parse("{\"slo_ms\": \"fast\", \"stages\": [{\"name\": \"a\", \"model\": \"m\"}]}"))
                .hasMessageContaining("slo_ms");
    }

    @Test
    void profilesReadAMeasuredCsvATableOrALine() throws Exception {
        Files.writeString(dir.resolve("m-cpu.csv"), "# measured\nbatch_size,service_ns\n1,2000000\n1,2000000\n4,5000000\n");
        Path json = dir.resolve("m.json");
        Files.writeString(json, """
                {"model": "m", "hardware": {
                  "cpu": {"profile": "m-cpu.csv"},
                  "cpu-2t": {"latency_ms": {"1": 1.5, "8": 5}},
                  "cuda": {"beta_ms": 1, "alpha_ms": 0.25}}}""");
        ModelProfiles p = ModelProfiles.read(List.of(json));
        assertThat(p.kinds("m")).containsExactly("cpu", "cpu-2t", "cuda");
        assertThat(p.latency("m", "cpu").meanNanos(4)).isEqualTo(5e6);
        assertThat(p.latency("m", "cpu").meanNanos(2)).isEqualTo(3e6); // the slope between the measured sizes
        assertThat(p.latency("m", "cpu-2t").meanNanos(8)).isEqualTo(5e6);
        assertThat(p.latency("m", "cuda").meanNanos(4)).isEqualTo(2e6);
        assertThatThrownBy(() -> p.latency("m", "tpu")).hasMessageContaining("no profile for hardware 'tpu'");
        Files.writeString(json, "{\"model\": \"m\", \"hardware\": {\"cpu\": {\"alpha_ms\": 1}}}");
        assertThatThrownBy(() -> ModelProfiles.read(List.of(json))).hasMessageContaining("hardware 'cpu'")
                .hasMessageContaining("beta_ms");
    }

    @Test
    void costsArePositivePricesPerKind() throws Exception {
        Path f = dir.resolve("costs.json");
        Files.writeString(f, "{\"per_replica_hour\": {\"cpu\": 0.05, \"cuda\": 0.9}}");
        HardwareCosts c = HardwareCosts.read(f);
        assertThat(c.byPriceDescending(List.of("cpu", "cuda", "tpu"))).containsExactly("cuda", "cpu");
        assertThat(new PipelineConfig(List.of(new StageConfig("cpu", 3, 1), new StageConfig("cuda", 1, 8)))
                .costPerHour(c)).isCloseTo(1.05, org.assertj.core.api.Assertions.within(1e-9));
        Files.writeString(f, "{\"per_replica_hour\": {\"cpu\": 0}}");
        assertThatThrownBy(() -> HardwareCosts.read(f)).hasMessageContaining("must be > 0");
        assertThatThrownBy(() -> new HardwareCosts(Map.of("cpu", 1.0)).perReplicaHour("gpu"))
                .hasMessageContaining("no cost for hardware kind 'gpu'");
    }
}
