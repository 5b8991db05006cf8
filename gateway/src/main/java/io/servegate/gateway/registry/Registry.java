package io.servegate.gateway.registry;

import java.util.List;
import java.util.function.Consumer;
import reactor.core.publisher.Mono;

/**
 * The gateway's registry of applications, model versions, app-model links and container replicas
 * (Clipper's data model).
 *
 * <p><b>Reads</b> go through {@link #snapshot()}: an immutable in-memory view that never blocks.
 * <b>Writes</b> return a lazy {@link Mono} (nothing happens until it is subscribed); it completes
 * once the change is applied <em>and</em> visible in this instance's {@link #snapshot()}. A
 * refused write fails with {@link RegistryException} (its {@link RegistryException.Kind} says why)
 * and changes nothing; a store that cannot be reached fails it with
 * {@link RegistryUnavailableException}. A write that changes nothing (re-linking a linked model,
 * removing an absent replica, setting the version that is already current) succeeds without a
 * new revision.
 *
 * <p>Names of apps, models and versions must pass {@link Names#requireValid} (else
 * {@code INVALID}); input types are Clipper's names ({@code ints}, {@code floats},
 * {@code doubles}, {@code bytes}, {@code strings}). Deleting every version of a linked model
 * leaves the link in place (the app then has nothing to route to until a version is added).
 */
public interface Registry extends AutoCloseable {

    /** @return the current snapshot; never null, never blocks */
    RegistrySnapshot snapshot();

    /**
     * Adds an application. {@code CONFLICT} if it or a pipeline of that name exists; every linked model must exist
     * ({@code NOT_FOUND}) and take the app's input type ({@code INVALID}). Duplicate links are
     * collapsed.
     */
    Mono<Void> addApp(Application app);

    /** Deletes an application and its links; {@code NOT_FOUND} if absent. */
    Mono<Void> deleteApp(String name);

    /**
     * Adds a pipeline app. {@code INVALID} if its graph breaks a rule of {@link PipelineGraph#of} or
     * a stage's model takes another input type than the stage gives it; {@code NOT_FOUND} if a
     * stage's model does not exist; {@code CONFLICT} if a pipeline or an app has its name. Like an
     * app's links, a pipeline stays when its models' versions are deleted (its queries then get
     * the default, naming the stage).
     */
    Mono<Void> addPipeline(Pipeline pipeline);

    /** Deletes a pipeline; {@code NOT_FOUND} if absent. */
    Mono<Void> deletePipeline(String name);

    /**
     * Adds a model version and makes it the model's current version (as Clipper does).
     * {@code CONFLICT} if that version exists; {@code INVALID} if its input type differs from the
     * model's other versions (or, for a model with no versions left, from an app still linked to it).
     */
    Mono<Void> addModel(ModelVersion model);

    /** Makes {@code version} the current version of model {@code name}; {@code NOT_FOUND} if absent. */
    Mono<Void> setModelVersion(String name, String version);

    /**
     * Deletes a model version and its replicas; {@code NOT_FOUND} if absent. If it was current,
     * the highest remaining version (numeric-aware order: {@code 10 > 9}) becomes current, or the
     * model has no current version when none remain.
     */
    Mono<Void> deleteVersionedModel(String name, String version);

    /**
     * Links models to an app, appending them after the existing links; already-linked models are
     * ignored. {@code NOT_FOUND} if the app or a model does not exist, {@code INVALID} if a model's
     * input type differs from the app's. All or nothing.
     */
    Mono<Void> addModelLinks(String app, List<String> models);

    /** Unlinks models from an app; names not linked are ignored; {@code NOT_FOUND} if no such app. */
    Mono<Void> deleteModelLinks(String app, List<String> models);

    /** Adds (or, for an existing id, replaces) a replica; {@code NOT_FOUND} if its model version does not exist. */
    Mono<Void> addReplica(ContainerReplica replica);

    /** Removes a replica; does nothing if there is none with that id. */
    Mono<Void> removeReplica(String id);

    /**
     * Stores a model version's profile on a hardware kind, replacing the one stored under the same
     * model, version and kind. {@code NOT_FOUND} if the version does not exist; {@code INVALID}
     * for a profile without measurements or with sizes out of order. Deleting the version deletes
     * its profiles.
     */
    Mono<Void> putProfile(ModelProfile profile);

    /**
     * Applies a pipeline plan's registry part in one step: the stages' deadlines and the model
     * versions' maximum batch sizes. Everything is validated before anything changes:
     * {@code NOT_FOUND} for an unknown pipeline or model version, {@code INVALID} for an unknown
     * or combine stage, a deadline or batch size below 1, or deadlines that leave a model stage
     * out or exceed the SLO along a path ({@link PipelineGraph#of}); {@code CONFLICT} when a
     * shared store changed the records meanwhile (apply again).
     */
    Mono<Void> applyPipelinePlan(PipelinePlanChange plan);

    /**
     * Registers a listener called with the new snapshot after each change (local or, for a shared
     * store, made by another instance). Calls are sequential and in revision order; under
     * concurrent changes one call may cover several of them (the listener always gets the newest
     * snapshot). A listener that throws is logged and does not stop the others. Listeners should
     * be quick and must not block on registry writes.
     */
    void addListener(Consumer<RegistrySnapshot> listener);

    /** Releases resources (connections, threads); no exception is declared. */
    @Override
    void close();
}
