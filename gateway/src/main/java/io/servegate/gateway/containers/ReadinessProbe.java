package io.servegate.gateway.containers;

import io.servegate.oip.client.ContainerClient;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The Open Inference Protocol readiness check every manager applies before a replica gets
 * traffic: ServerReady and ModelReady for the served model version, over a real gRPC connection.
 * Works for any OIP server (our SDK's, Triton, MLServer), not only ours.
 */
public final class ReadinessProbe {

    private final Duration callTimeout;
    private final Duration interval;
    private final Scheduler scheduler;

    /**
     * @param callTimeout how long one check may take
     * @param interval    pause between checks while waiting for readiness
     * @param scheduler   where the retries are timed
     */
    public ReadinessProbe(Duration callTimeout, Duration interval, Scheduler scheduler) {
        this.callTimeout = callTimeout;
        this.interval = interval;
        this.scheduler = scheduler;
    }

    /** One check: emits true only if the server and the model version say they are ready; never errors. */
    public Mono<Boolean> check(String address, String model, String version) {
        return Mono.using(() -> ContainerClient.connect(address),
                client -> Mono.fromFuture(() -> client.serverReady(callTimeout))
                        .filter(Boolean::booleanValue)
                        .flatMap(ok -> Mono.fromFuture(() -> client.modelReady(model, version, callTimeout)))
                        .defaultIfEmpty(false),
                ContainerClient::close)
                .onErrorReturn(false);
    }

    /**
     * Checks every {@code interval} until ready; emits true once ready, or false when
     * {@code timeout} passes first.
     */
    public Mono<Boolean> awaitReady(String address, String model, String version, Duration timeout) {
        return check(address, model, version)
                .filter(Boolean::booleanValue)
                .repeatWhenEmpty(Integer.MAX_VALUE, attempts -> attempts.delayElements(interval, scheduler))
                .timeout(timeout, Mono.just(false), scheduler);
    }
}
