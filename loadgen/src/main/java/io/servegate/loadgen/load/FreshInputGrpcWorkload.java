package io.servegate.loadgen.load;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One input per request straight to a model container over the Open Inference Protocol, a new
 * random vector each time: the direct counterpart of {@link GatewayPredictWorkload}.
 */
public final class FreshInputGrpcWorkload implements Workload {

    private final ContainerClient client;
    private final String model;
    private final RandomInputs inputs;
    private final Duration timeout;

    public FreshInputGrpcWorkload(ContainerClient client, String model, RandomInputs inputs, Duration timeout) {
        this.client = client;
        this.model = model;
        this.inputs = inputs;
        this.timeout = timeout;
    }

    @Override
    public int inputsPerRequest() {
        return 1;
    }

    @Override
    public CompletableFuture<?> send() {
        return client.infer(model, "", TensorType.FLOATS, List.of(inputs.vector()), TensorType.STRINGS, timeout);
    }
}
