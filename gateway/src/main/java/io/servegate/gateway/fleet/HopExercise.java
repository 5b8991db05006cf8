package io.servegate.gateway.fleet;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.scheduling.Tenant;
import io.servegate.oip.client.TensorType;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The warm-up's exercise of the fleet hop, both ends over real loopback gRPC: queries for the
 * warm-up's version are coalesced ({@link ForwardBatcher}) and sent with the fleet secret
 * ({@link ForwardClient}) to this gateway's own forwarding port, where {@link ForwardService}
 * checks, parses and schedules them on the warm-up's private pool ({@link ForwardService.Exercise}).
 * Its client and batcher are its own, with meters of their own: the gateway's forwarding metrics
 * and connections to the other members never see it. Closing it stops serving the warm-up's version.
 */
public final class HopExercise implements AutoCloseable {

    private final ForwardService service;
    private final ForwardClient client;
    private final ForwardBatcher batcher;
    private final Route.Remote self;
    private final ForwardService.Exercise exercise;
    private final TensorType<?> type;

    HopExercise(ForwardService service, ForwardClient client, Ownership ownership, String address,
            LongSupplier clock, int maxMessageBytes, ForwardService.Exercise exercise) {
        this.service = service;
        this.client = client;
        this.batcher = new ForwardBatcher(client, ownership, clock, maxMessageBytes, new SimpleMeterRegistry());
        this.self = new Route.Remote(ownership.self(), address, 0);
        this.exercise = exercise;
        this.type = TensorType.forName(exercise.served().inputType());
        service.exercise(exercise);
    }

    /** The output the private pool's replica gave {@code row}, forwarded through this gateway's own fleet port. */
    public CompletableFuture<String> forward(Object row, long deadlineNanos) {
        return batcher.forward(self, exercise.model(), exercise.served().version(), type, row, Tenant.DEFAULT,
                deadlineNanos, null).thenApply(ForwardProtocol::output);
    }

    @Override
    public void close() {
        service.exercise(null);
        batcher.close();
        client.close();
    }
}
