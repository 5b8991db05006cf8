package io.servegate.gateway.dispatch;

import io.servegate.gateway.registry.ModelProfile;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.ContainerProfiler;
import io.servegate.oip.client.TensorType;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Profiles one replica of a model version, InferLine-style ({@link ContainerProfiler}: batches of
 * 1, 2, 4, … one at a time, over its own gRPC channel, beside the replica's scheduled traffic),
 * and stores the mean and p99 per batch size in the registry under the version's hardware kind.
 * One run at a time per model: a profile measured while another of the same model runs would
 * share its containers' cores.
 */
public final class ReplicaProfiler {

    private final Registry registry;
    private final ReplicaPool pool;
    private final int maxMessageBytes;
    private final Clock clock;
    private final Set<String> running = ConcurrentHashMap.newKeySet();

    public ReplicaProfiler(Registry registry, ReplicaPool pool, int maxMessageBytes, Clock clock) {
        this.registry = registry;
        this.pool = pool;
        this.maxMessageBytes = maxMessageBytes;
        this.clock = clock;
    }

    /** Why a profiling run cannot start now. */
    public static final class Busy extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Busy(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Profiles the first available replica of {@code model} (by id) and stores the result.
     *
     * @param inputLength values per input (bytes for {@code bytes}, characters for {@code strings})
     * @return the stored profile; fails with {@link Busy} when the version has no available
     *         replica or the model is being profiled already, with the gRPC error of a failed
     *         batch, or with the registry's error
     */
    public Mono<ModelProfile> profile(ModelVersion model, ContainerProfiler settings, int inputLength) {
        return Mono.defer(() -> {
            Map<String, String> replicas = pool.availableReplicas(model.name(), model.version());
            if (replicas.isEmpty()) {
                return Mono.error(new Busy("model version '" + model.name() + ":" + model.version()
                        + "' has no available replica to profile"));
            }
            if (!running.add(model.name())) {
                return Mono.error(new Busy("model '" + model.name() + "' is being profiled already"));
            }
            Map.Entry<String, String> replica = replicas.entrySet().iterator().next();
            ContainerClient client = ContainerClient.connect(replica.getValue(), maxMessageBytes);
            TensorType<?> type = TensorType.forName(model.inputType());
            return Mono.fromFuture(() -> measure(settings, client, model, type, inputLength))
                    .map(p -> stored(model, replica.getKey(), replica.getValue(), settings, p))
                    .flatMap(p -> registry.putProfile(p).thenReturn(p))
                    // closing waits for the channel's shutdown: off the caller's thread
                    .doFinally(signal -> {
                        running.remove(model.name());
                        Schedulers.boundedElastic().schedule(client::close);
                    });
        });
    }

    private static <X> CompletableFuture<ContainerProfiler.Profile> measure(
            ContainerProfiler settings, ContainerClient client, ModelVersion model, TensorType<X> type,
            int inputLength) {
        Random random = new Random(1);
        return settings.profile(client, model.name(), model.version(), type,
                size -> inputs(type, size, inputLength, random), size -> { });
    }

    private ModelProfile stored(ModelVersion model, String replicaId, String address, ContainerProfiler settings,
            ContainerProfiler.Profile p) {
        List<ModelProfile.BatchLatency> batches = new ArrayList<>();
        for (int size : p.samplesNanos().keySet()) {
            batches.add(new ModelProfile.BatchLatency(size, round(p.meanNanos(size) / 1e6),
                    round(p.quantileNanos(size, 0.99) / 1e6)));
        }
        return new ModelProfile(model.name(), model.version(), model.hardware(), replicaId, address,
                clock.instant(), settings.samples(), p.roundTrip(), batches);
    }

    private static double round(double ms) {
        return Math.round(ms * 1000) / 1000.0;
    }

    /** A batch of random inputs of the model's type: what is measured is time, not answers. */
    @SuppressWarnings("unchecked")
    private static <X> List<X> inputs(TensorType<X> type, int size, int length, Random random) {
        List<Object> batch = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            batch.add(switch (type.clipperName()) {
                case "floats" -> {
                    float[] v = new float[length];
                    for (int j = 0; j < length; j++) {
                        v[j] = random.nextFloat();
                    }
                    yield v;
                }
                case "doubles" -> random.doubles(length).toArray();
                case "ints" -> random.ints(length, 0, 256).toArray();
                case "bytes" -> {
                    byte[] v = new byte[length];
                    random.nextBytes(v);
                    yield v;
                }
                default -> "x".repeat(length);
            });
        }
        return (List<X>) batch;
    }
}
