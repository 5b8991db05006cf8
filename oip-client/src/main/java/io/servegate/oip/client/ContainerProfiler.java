package io.servegate.oip.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

/**
 * Measures a model container's service time per batch size, as InferLine's profiler does: batches
 * of 1, 2, 4, … up to a limit, sent one at a time so that none waits behind another, each size
 * several times after unrecorded warm-up batches. A sample is the container's own reported time
 * ({@code servegate_service_time_ns}), or the client's round trip where it reports none.
 *
 * <p>Asynchronous: {@link #profile} returns at once and the batches follow each other on gRPC's
 * threads, so a caller on an event loop is never blocked.
 *
 * @param maxBatch largest batch size, {@code >= 1}; sizes are the powers of two up to it
 * @param samples  measured batches per size, {@code >= 1}
 * @param warmup   unrecorded batches before them, per size, {@code >= 0}
 * @param timeout  each batch's deadline
 */
public record ContainerProfiler(int maxBatch, int samples, int warmup, Duration timeout) {

    public ContainerProfiler {
        if (maxBatch < 1 || samples < 1 || warmup < 0) {
            throw new IllegalArgumentException("need maxBatch >= 1, samples >= 1, warmup >= 0; got " + maxBatch + ", "
                    + samples + ", " + warmup);
        }
    }

    /** The batch sizes measured: 1, 2, 4, … up to {@link #maxBatch}. */
    public List<Integer> sizes() {
        List<Integer> sizes = new ArrayList<>();
        for (int b = 1; b <= maxBatch && b > 0; b *= 2) {
            sizes.add(b);
        }
        return sizes;
    }

    /**
     * Profiles {@code model} at {@code client}'s container.
     *
     * @param version   the model version, or empty for the server's choice
     * @param batchOf   the inputs of a batch of the given size (called once per size)
     * @param sizeDone  told each batch size once it is measured (progress)
     * @return the samples; fails with the first failed batch's error
     */
    public <X> CompletableFuture<Profile> profile(ContainerClient client, String model, String version,
            TensorType<X> inputType, IntFunction<List<X>> batchOf, IntConsumer sizeDone) {
        Map<Integer, long[]> bySize = new LinkedHashMap<>();
        boolean[] roundTrip = {false};
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int size : sizes()) {
            chain = chain.thenCompose(ignored -> {
                List<X> batch = batchOf.apply(size);
                long[] measured = new long[samples];
                CompletableFuture<Void> sizeChain = CompletableFuture.completedFuture(null);
                for (int i = 0; i < warmup + samples; i++) {
                    int index = i - warmup;
                    sizeChain = sizeChain.thenCompose(x -> {
                        long sent = System.nanoTime();
                        return client.inferAsText(model, version, inputType, batch, timeout).thenAccept(r -> {
                            long elapsed = System.nanoTime() - sent;
                            if (index >= 0) {
                                synchronized (bySize) {
                                    roundTrip[0] |= r.serviceTimeNanos() <= 0;
                                    measured[index] = r.serviceTimeNanos() > 0 ? r.serviceTimeNanos() : elapsed;
                                }
                            }
                        });
                    });
                }
                return sizeChain.thenRun(() -> {
                    synchronized (bySize) {
                        bySize.put(size, measured);
                    }
                    sizeDone.accept(size);
                });
            });
        }
        return chain.thenApply(x -> {
            synchronized (bySize) {
                return new Profile(bySize, roundTrip[0]);
            }
        });
    }

    /**
     * What a profiling run measured.
     *
     * @param samplesNanos every measured batch's time, by batch size in increasing order (copied)
     * @param roundTrip    whether any sample is a round trip (the container reported no service time)
     */
    public record Profile(Map<Integer, long[]> samplesNanos, boolean roundTrip) {

        public Profile {
            Map<Integer, long[]> copy = new LinkedHashMap<>();
            samplesNanos.forEach((size, samples) -> copy.put(size, samples.clone()));
            samplesNanos = Collections.unmodifiableMap(copy);
        }

        /** The mean time of a measured batch size, in nanoseconds. */
        public double meanNanos(int size) {
            return Arrays.stream(of(size)).average().orElseThrow();
        }

        /** A quantile (nearest rank) of a measured batch size's times, in nanoseconds. */
        public long quantileNanos(int size, double q) {
            long[] sorted = of(size).clone();
            Arrays.sort(sorted);
            int rank = (int) Math.ceil(q * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
        }

        private long[] of(int size) {
            long[] s = samplesNanos.get(size);
            if (s == null) {
                throw new IllegalArgumentException("batch size " + size + " was not measured");
            }
            return s;
        }
    }
}
