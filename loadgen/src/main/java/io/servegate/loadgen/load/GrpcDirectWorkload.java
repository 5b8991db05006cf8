package io.servegate.loadgen.load;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * Sends one batch of random float vectors straight to a model container over the Open Inference
 * Protocol, as the gateway would, decoding the string answers (so the client's share of the
 * protocol cost is in the measurement too).
 */
public final class GrpcDirectWorkload implements Workload {

    private final ContainerClient client;
    private final String model;
    private final List<float[]> batch;
    private final Duration timeout;

    /**
     * @param batchSize vectors per request
     * @param inputLength floats per vector
     * @param seed the seed of the (fixed) random payload
     */
    public GrpcDirectWorkload(ContainerClient client, String model, int batchSize, int inputLength,
            Duration timeout, long seed) {
        this.client = client;
        this.model = model;
        this.timeout = timeout;
        Random random = new Random(seed);
        List<float[]> inputs = new ArrayList<>(batchSize);
        for (int i = 0; i < batchSize; i++) {
            float[] v = new float[inputLength];
            for (int j = 0; j < inputLength; j++) {
                v[j] = random.nextFloat();
            }
            inputs.add(v);
        }
        this.batch = List.copyOf(inputs);
    }

    @Override
    public int inputsPerRequest() {
        return batch.size();
    }

    @Override
    public CompletableFuture<?> send() {
        return client.infer(model, "", TensorType.FLOATS, batch, TensorType.STRINGS, timeout);
    }
}
