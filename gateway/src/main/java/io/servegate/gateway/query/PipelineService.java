package io.servegate.gateway.query;

import io.servegate.core.cache.EncodedInput;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.LatencyProfiles;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.PipelineEdge;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.registry.StageInput;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.oip.client.TensorType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runs pipeline apps: each query flows stage by stage through each stage model's own scheduler
 * and the prediction cache ({@link PredictionService}), every stage under its own deadline
 * ({@link StageDeadlines}), stages whose predecessors are done running at once (a parallel
 * fan-out runs in parallel). A stage runs when one of its incoming edges is taken: its source ran
 * and the edge's condition, if any, holds on the source's answer. The pipeline answers with the
 * last stage in topological order that ran. When a stage fails or misses its deadline, the query
 * gets the pipeline's default output at once, and the explanation names that stage. Each stage's
 * model answers with the version a {@link VersionRouter} gives the query's user: its current
 * version, or its rollout's candidate (stage deadlines are planned on the current versions). Each
 * stage is scheduled as the pipeline's own tenant (its name, with the priority and weight
 * {@code add_pipeline} gave it), so that tiers, fair shares and the per-app model time count a
 * pipeline apart from other apps.
 */
public final class PipelineService {

    private final PredictionService predictions;
    private final LatencyProfiles profiles;
    private final BiFunction<TensorType<?>, String, Object> outputAsInput;

    /**
     * @param outputAsInput parses a stage's output as the next stage's input of the given type
     *                      ({@link StageInput#PREVIOUS}); throws IllegalArgumentException when it is not one
     */
    public PipelineService(PredictionService predictions, LatencyProfiles profiles,
            BiFunction<TensorType<?>, String, Object> outputAsInput) {
        this.predictions = predictions;
        this.profiles = profiles;
        this.outputAsInput = outputAsInput;
    }

    /** Predicts one input through a pipeline, answering by {@code arrivalNanos + SLO}, each stage's model on its current version. */
    public Mono<Prediction> predict(PipelineGraph graph, RegistrySnapshot snapshot, Object input, long arrivalNanos) {
        return predict(graph, snapshot, input, arrivalNanos, VersionRouter.CURRENT);
    }

    /** As {@link #predict(PipelineGraph, RegistrySnapshot, Object, long)}, each stage's version chosen by {@code router}. */
    public Mono<Prediction> predict(PipelineGraph graph, RegistrySnapshot snapshot, Object input, long arrivalNanos,
            VersionRouter router) {
        Application app = graph.pipeline().asApplication();
        long[] due = deadlines(graph, snapshot);
        for (int i = 0; i < due.length; i++) {
            due[i] += arrivalNanos;
        }
        Run run = new Run(graph, snapshot, input, arrivalNanos, due, router, app.tenant());
        return Flux.fromIterable(graph.order())
                .flatMapSequential(run::result)
                .filter(Optional::isPresent)
                .last()
                .map(last -> Prediction.of(last.get().answer()))
                .onErrorResume(PredictionException.class, e -> predictions.failed(app, e, null))
                .doOnNext(p -> predictions.record(app, p, arrivalNanos));
    }

    /**
     * Each stage's deadline as an offset from arrival in nanoseconds, indexed by
     * {@link PipelineGraph#position}: the plan's, or the SLO split by the stage models' profiles now.
     */
    public long[] deadlines(PipelineGraph graph, RegistrySnapshot snapshot) {
        long budget = predictions.deadline(graph.pipeline().asApplication(), 0);
        return StageDeadlines.offsets(graph, budget, stage -> snapshot.currentVersion(stage.model())
                .map(v -> profiles.singleQueryNanos(stage.model(), v)).orElse(-1L));
    }

    /** One query's walk through the graph; each stage's result is computed once and shared by its successors. */
    private final class Run {

        private final PipelineGraph graph;
        private final RegistrySnapshot snapshot;
        private final Object input;
        private final long arrival;
        private final long[] due;
        private final VersionRouter router;
        private final Tenant tenant;
        /** The request's trace, under which later stages (started from earlier ones' callbacks) predict; or null. */
        private final RequestTrace request = predictions.tracing().on() ? RequestTrace.current() : null;
        private final Map<String, Mono<Optional<StageResult>>> results = new HashMap<>();

        Run(PipelineGraph graph, RegistrySnapshot snapshot, Object input, long arrival, long[] due,
                VersionRouter router, Tenant tenant) {
            this.graph = graph;
            this.snapshot = snapshot;
            this.input = input;
            this.arrival = arrival;
            this.due = due;
            this.router = router;
            this.tenant = tenant;
        }

        /** The stage's result, empty when no incoming edge was taken; fails with the stage named. */
        synchronized Mono<Optional<StageResult>> result(PipelineStage stage) {
            Mono<Optional<StageResult>> r = results.get(stage.name());
            if (r == null) {
                r = compute(stage).cache();
                results.put(stage.name(), r);
            }
            return r;
        }

        private Mono<Optional<StageResult>> compute(PipelineStage stage) {
            List<PipelineEdge> edges = graph.incoming(stage.name());
            if (edges.isEmpty()) {
                return run(stage, List.of()).map(Optional::of);
            }
            return Flux.fromIterable(edges)
                    .flatMapSequential(e -> result(graph.order().get(graph.position(e.from())))
                            .map(from -> from.filter(f -> e.when() == null || e.when().holds(f.confidence()))))
                    .collectList()
                    .flatMap(sources -> {
                        List<StageResult> taken = new ArrayList<>();
                        sources.forEach(s -> s.ifPresent(taken::add));
                        return taken.isEmpty() ? Mono.just(Optional.<StageResult>empty())
                                : run(stage, taken).map(Optional::of);
                    });
        }

        private Mono<StageResult> run(PipelineStage stage, List<StageResult> taken) {
            if (stage.isCombine()) {
                return Mono.just(StageResult.majority(taken));
            }
            long deadline = due[graph.position(stage.name())];
            String current = snapshot.currentVersion(stage.model()).orElse(null);
            if (current == null) {
                return Mono.error(failed(stage, null, deadline,
                        new PredictionException(DefaultReason.NO_MODEL, "model " + stage.model() + " has no version")));
            }
            TensorType<?> type = TensorType.forName(graph.modelInputTypes().get(stage.model()));
            Object in;
            try {
                in = stage.input() == StageInput.PREVIOUS ? outputAsInput.apply(type, taken.get(0).output()) : input;
            } catch (IllegalArgumentException e) {
                return Mono.error(failed(stage, current, deadline, new PredictionException(
                        DefaultReason.CONTAINER_ERROR, "its predecessor's output is no '" + type.clipperName()
                                + "' input: " + e.getMessage())));
            }
            EncodedInput encoded = PredictionService.encode(type, in);
            String[] answering = {current};
            Function<String, Mono<Prediction>> predictWith = v -> {
                answering[0] = v;
                return request == null ? predictions.infer(stage.model(), v, in, encoded, deadline, tenant)
                        : request.predicting(() -> predictions.infer(stage.model(), v, in, encoded, deadline, tenant));
            };
            return router.predict(stage.model(), current, encoded, predictWith,
                            (v, timeout) -> predictions.infer(stage.model(), v, type, in, timeout))
                    .map(p -> StageResult.of(stage, p.output()))
                    .onErrorMap(PredictionException.class, e -> failed(stage, answering[0], deadline, e));
        }

        /**
         * The failure with the stage named, e.g. {@code stage 'accurate' (fmnist-cnn:1, due 99.0 ms after
         * arrival)}. A stage that rejects the query's own input rejects the query (400); one that rejects
         * its predecessor's output failed the pipeline, which answers its default.
         */
        private PredictionException failed(PipelineStage stage, String version, long deadline, PredictionException e) {
            String cause = e.getMessage().substring(Math.min(e.getMessage().length(),
                    e.reason().explanation().length()));
            DefaultReason reason = e.reason() == DefaultReason.INPUT_REJECTED && stage.input() != StageInput.QUERY
                    ? DefaultReason.CONTAINER_ERROR : e.reason();
            return new PredictionException(reason, String.format(Locale.ROOT,
                    "stage '%s' (%s%s, due %.1f ms after arrival)%s", stage.name(), stage.model(),
                    version == null ? "" : ":" + version, (deadline - arrival) / 1e6,
                    cause.isEmpty() ? "" : cause.replaceFirst("^: ", "; ")));
        }
    }
}
