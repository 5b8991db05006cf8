package io.servegate.gateway.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.cache.PredictionCache;
import io.servegate.gateway.registry.CombineKind;
import io.servegate.gateway.registry.ConditionKind;
import io.servegate.gateway.registry.EdgeCondition;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Pipeline;
import io.servegate.gateway.registry.PipelineEdge;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.StageInput;
import io.servegate.gateway.registry.StageOutput;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Pipelines on the real query path (cache, deadlines) in virtual time, with models that answer
 * after a set latency: conditional routing, parallel fan-out with a combine step, a stage fed its
 * predecessor's output, each stage's deadline (planned or split by profiles), and the default
 * naming the stage that missed.
 */
class PipelineServiceVirtualTimeTest {

    private static final float[] INPUT = {0.5f, 0.25f};
    private static final EdgeCondition UNSURE = new EdgeCondition(ConditionKind.CONFIDENCE_BELOW, 0.9);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final InMemoryRegistry registry = new InMemoryRegistry();
    /** model name to (latency, output for the input). */
    private final Map<String, Model> models = new HashMap<>();
    private final Map<String, Long> profiles = new HashMap<>();
    /** model name to the deadlines its queries were submitted with, and their inputs. */
    private final Map<String, List<Long>> deadlines = new ConcurrentHashMap<>();
    private final Map<String, List<Long>> submittedAt = new ConcurrentHashMap<>();
    private final Map<String, List<Object>> inputs = new ConcurrentHashMap<>();
    private VirtualTimeScheduler time;
    private PipelineService pipelines;

    private record Model(Duration latency, Function<Object, String> output) {
    }

    @BeforeEach
    void setUp() {
        time = VirtualTimeScheduler.getOrSet();
        PredictionService predictions = new PredictionService(new PredictionCache(true, 1 << 20, meters),
                (model, version, input, deadline) -> {
                    deadlines.computeIfAbsent(model, k -> new ArrayList<>()).add(deadline);
                    submittedAt.computeIfAbsent(model, k -> new ArrayList<>()).add(now());
                    inputs.computeIfAbsent(model, k -> new ArrayList<>()).add(input);
                    Model m = models.get(model);
                    CompletableFuture<String> f = new CompletableFuture<>();
                    time.schedule(() -> f.complete(m.output().apply(input)), m.latency().toNanos(),
                            TimeUnit.NANOSECONDS);
                    return f;
                }, PipelineServiceVirtualTimeTest::now, meters, Duration.ZERO, time, time);
        pipelines = new PipelineService(predictions,
                (model, version) -> profiles.getOrDefault(model, -1L),
                (type, output) -> { // a JSON array of numbers, as the gateway's JSON parser would read it
                    String[] parts = output.replaceAll("[\\[\\]]", "").split(",");
                    float[] parsed = new float[parts.length];
                    for (int i = 0; i < parts.length; i++) {
                        parsed[i] = Float.parseFloat(parts[i]);
                    }
                    return parsed;
                });
    }

    @AfterEach
    void tearDown() {
        VirtualTimeScheduler.reset();
        registry.close();
    }

    private static long now() {
        return VirtualTimeScheduler.get().now(TimeUnit.NANOSECONDS);
    }

    private void model(String name, long latencyMs, Function<Object, String> output) {
        models.put(name, new Model(Duration.ofMillis(latencyMs), output));
        registry.addModel(new ModelVersion(name, "1", List.of(), "floats", null, null, -1)).block();
    }

    private PipelineGraph add(Pipeline p) {
        registry.addPipeline(p).block();
        return registry.snapshot().pipeline(p.name()).orElseThrow();
    }

    /** Predicts {@code input}, advancing virtual time until the answer; returns it and when it came. */
    private Answer predict(PipelineGraph g, Object input) {
        long start = now();
        List<Prediction> out = new ArrayList<>();
        List<Long> at = new ArrayList<>();
        pipelines.predict(g, registry.snapshot(), input, start).subscribe(p -> {
            out.add(p);
            at.add(now());
        });
        for (int ms = 0; ms < 1_000 && out.isEmpty(); ms++) {
            time.advanceTimeBy(Duration.ofMillis(1));
        }
        assertThat(out).as("answered within a virtual second").hasSize(1);
        return new Answer(out.get(0), TimeUnit.NANOSECONDS.toMillis(at.get(0) - start));
    }

    private record Answer(Prediction prediction, long afterMs) {
    }

    private Pipeline cascade(long fastPlanMicros, long accuratePlanMicros) {
        return new Pipeline("cascade", "floats", "fallback", 100_000, List.of(
                new PipelineStage("fast", "fast", null, null, StageOutput.LOGITS, fastPlanMicros),
                new PipelineStage("accurate", "cnn", null, null, StageOutput.LABEL, accuratePlanMicros)),
                List.of(new PipelineEdge("fast", "accurate", UNSURE)));
    }

    @Test
    void aConfidentFirstStageAnswersAloneAndAnUnsureOneEscalates() {
        // logits: class 2 clearly ahead for the first input, a near tie for the second
        model("fast", 2, in -> ((float[]) in)[0] > 0.4f ? "[0.0, 1.0, 9.0]" : "[0.0, 1.0, 1.2]");
        model("cnn", 10, in -> "7");
        PipelineGraph g = add(cascade(0, 0));

        Answer sure = predict(g, INPUT);
        assertThat(sure.prediction()).isEqualTo(Prediction.of("2"));
        assertThat(inputs.get("cnn")).as("the CNN was not asked").isNull();
        assertThat(sure.afterMs()).isEqualTo(2);

        Answer unsure = predict(g, new float[] {0.1f, 0.2f});
        assertThat(unsure.prediction()).isEqualTo(Prediction.of("7"));
        assertThat(inputs.get("cnn")).hasSize(1);
        assertThat(unsure.afterMs()).as("the stages ran one after the other").isEqualTo(12);
    }

    @Test
    void withoutAPlanTheSloIsSplitInProportionToTheProfiledLatencies() {
        model("fast", 1, in -> "[0.0, 0.0]");
        model("cnn", 1, in -> "7");
        profiles.put("fast", TimeUnit.MILLISECONDS.toNanos(1));
        profiles.put("cnn", TimeUnit.MILLISECONDS.toNanos(4));
        PipelineGraph g = add(cascade(0, 0));

        long[] due = pipelines.deadlines(g, registry.snapshot());
        assertThat(due).containsExactly(TimeUnit.MILLISECONDS.toNanos(20), TimeUnit.MILLISECONDS.toNanos(100));
        long start = now();
        predict(g, INPUT);
        assertThat(deadlines.get("fast")).containsExactly(start + TimeUnit.MILLISECONDS.toNanos(20));
        assertThat(deadlines.get("cnn")).containsExactly(start + TimeUnit.MILLISECONDS.toNanos(100));

        // a model with no profile yet: every model stage weighs the same
        profiles.remove("cnn");
        assertThat(pipelines.deadlines(g, registry.snapshot()))
                .containsExactly(TimeUnit.MILLISECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(100));
    }

    @Test
    void aPlanSetsEachStagesDeadline() {
        model("fast", 1, in -> "[0.0, 0.0]");
        model("cnn", 1, in -> "7");
        profiles.put("fast", TimeUnit.MILLISECONDS.toNanos(1));
        profiles.put("cnn", TimeUnit.MILLISECONDS.toNanos(4));
        PipelineGraph g = add(cascade(30_000, 60_000));
        // the plan, not the profiles; the final stage keeps the end-to-end deadline
        assertThat(pipelines.deadlines(g, registry.snapshot()))
                .containsExactly(TimeUnit.MILLISECONDS.toNanos(30), TimeUnit.MILLISECONDS.toNanos(100));
    }

    @Test
    void aStageThatMissesItsDeadlineGivesTheDefaultNamingIt() {
        model("fast", 2, in -> "[0.0, 0.1]");
        model("cnn", 150, in -> "7");
        PipelineGraph g = add(cascade(0, 0));
        Answer late = predict(g, INPUT);
        assertThat(late.prediction().isDefault()).isTrue();
        assertThat(late.prediction().output()).isEqualTo("fallback");
        assertThat(late.prediction().explanation()).startsWith(DefaultReason.DEADLINE.explanation())
                .contains("stage 'accurate' (cnn:1, due 100.0 ms after arrival)");
        assertThat(late.afterMs()).as("at the end-to-end deadline").isEqualTo(100);

        // the first stage's own deadline (50 ms: no profiles, equal split) passes first
        models.put("fast", new Model(Duration.ofMillis(70), in -> "[0.0, 0.1]"));
        Answer early = predict(g, new float[] {9f, 9f});
        assertThat(early.prediction().explanation()).contains("stage 'fast' (fast:1, due 50.0 ms after arrival)");
        assertThat(early.afterMs()).isEqualTo(50);
    }

    @Test
    void aFanOutRunsInParallelAndItsCombineStageTakesTheMajority() {
        model("a", 5, in -> "3");
        model("b", 8, in -> "[0.0, 0.0, 0.0, 4.0]");
        model("c", 6, in -> "1");
        model("d", 1, in -> "answered by d");
        PipelineGraph g = add(new Pipeline("vote", "floats", "fallback", 100_000, List.of(
                PipelineStage.model("a", "a", StageOutput.LABEL),
                PipelineStage.model("b", "b", StageOutput.LOGITS),
                PipelineStage.model("c", "c", StageOutput.LABEL),
                PipelineStage.combine("vote", CombineKind.MAJORITY),
                PipelineStage.model("tie-break", "d", StageOutput.LABEL)),
                List.of(new PipelineEdge("a", "vote"), new PipelineEdge("b", "vote"), new PipelineEdge("c", "vote"),
                        // a 2-of-3 majority has confidence 0.667: not below 0.5, so no tie-break
                        new PipelineEdge("vote", "tie-break",
                                new EdgeCondition(ConditionKind.CONFIDENCE_BELOW, 0.5)))));
        Answer answer = predict(g, INPUT);
        assertThat(answer.prediction()).isEqualTo(Prediction.of("3"));
        assertThat(answer.afterMs()).as("the slowest branch, not the sum").isEqualTo(8);
        assertThat(submittedAt.get("a")).isEqualTo(submittedAt.get("b")).isEqualTo(submittedAt.get("c"));
        assertThat(inputs.get("d")).isNull();
    }

    @Test
    void aStageFedItsPredecessorsOutputGetsItAsItsInput() {
        model("embed", 3, in -> "[1.5, 2.5, 3.5]");
        model("classify", 4, in -> "label-" + ((float[]) in).length);
        PipelineGraph g = add(new Pipeline("chain", "floats", "fallback", 100_000, List.of(
                PipelineStage.model("embed", "embed", StageOutput.FLOATS),
                new PipelineStage("classify", "classify", null, StageInput.PREVIOUS, StageOutput.LABEL, 0)),
                List.of(new PipelineEdge("embed", "classify"))));
        Answer answer = predict(g, INPUT);
        assertThat(answer.prediction()).isEqualTo(Prediction.of("label-3"));
        assertThat(Arrays.equals((float[]) inputs.get("classify").get(0), new float[] {1.5f, 2.5f, 3.5f})).isTrue();
        assertThat(answer.afterMs()).isEqualTo(7);
    }

    @Test
    void aStageWhoseModelLostItsVersionsNamesItInTheDefault() {
        model("fast", 1, in -> "[0.0, 0.0]");
        model("cnn", 1, in -> "7");
        PipelineGraph g = add(cascade(0, 0));
        registry.deleteVersionedModel("cnn", "1").block();
        Answer answer = predict(g, INPUT);
        assertThat(answer.prediction().explanation()).startsWith(DefaultReason.NO_MODEL.explanation())
                .contains("stage 'accurate' (cnn, due");
    }
}
