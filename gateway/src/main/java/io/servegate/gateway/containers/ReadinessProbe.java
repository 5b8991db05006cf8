package io.servegate.gateway.containers;

import io.grpc.Status;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The Open Inference Protocol readiness check every manager applies before a replica gets
 * traffic: ServerReady and ModelReady for the served model version, over a real gRPC connection.
 * Works for any OIP server (our SDK's, Triton, MLServer), not only ours. {@link #inspect} also
 * says what was tried and what came back, and tells a replica that serves another model, version
 * or input type than its registration (a {@linkplain Result#mismatch mismatch}, which waiting
 * does not mend) from one that is not ready yet.
 */
public final class ReadinessProbe {

    private final Duration callTimeout;
    private final Duration interval;
    private final Scheduler scheduler;

    /**
     * What one check found.
     *
     * @param ready    whether the server and the model version say they are ready (and its input type fits)
     * @param mismatch whether the server is up but serves something other than the registration says
     * @param detail   what was tried and what came back, for logs and {@code get_deployments}
     */
    public record Result(boolean ready, boolean mismatch, String detail) {
    }

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
        return inspect(address, model, version, null).map(Result::ready);
    }

    /**
     * One check, with what came back: ServerReady, then ModelReady for {@code model} and
     * {@code version}, then (given {@code inputType}, a registered input type such as
     * {@code floats}) the input datatype the model's metadata declares. Never errors.
     */
    public Mono<Result> inspect(String address, String model, String version, String inputType) {
        String asked = "ModelReady(" + model + ", version " + version + ") at " + address;
        return Mono.using(() -> ContainerClient.connect(address),
                client -> Mono.fromFuture(() -> client.serverReady(callTimeout))
                        .onErrorResume(e -> Mono.error(new Failed("ServerReady at " + address + ": " + describe(e))))
                        .flatMap(up -> !up ? Mono.just(new Result(false, false, "ServerReady at " + address
                                + " answered false"))
                                : Mono.fromFuture(() -> client.modelReady(model, version, callTimeout))
                                        .flatMap(ok -> !ok ? Mono.just(new Result(false, false, asked
                                                + " answered false"))
                                                : inputType == null ? Mono.just(new Result(true, false, asked
                                                        + " answered true"))
                                                : Mono.fromFuture(() -> client.modelMetadata(model, version,
                                                                callTimeout))
                                                        .map(md -> inputTypeFits(md, model, version, inputType))
                                                        // a server without metadata: ModelReady said enough
                                                        .onErrorReturn(new Result(true, false, asked
                                                                + " answered true")))
                                        .onErrorResume(e -> notServed(client, asked, e))),
                ContainerClient::close)
                .onErrorResume(e -> Mono.just(new Result(false, false, e instanceof Failed f ? f.getMessage()
                        : "connecting to " + address + ": " + describe(e))));
    }

    /** ModelReady failed: NOT_FOUND from a server that is up is a mismatch, named with what it serves. */
    private Mono<Result> notServed(ContainerClient client, String asked, Throwable e) {
        String answer = asked + " answered " + describe(e);
        if (Status.fromThrowable(e).getCode() != Status.Code.NOT_FOUND) {
            return Mono.just(new Result(false, false, answer));
        }
        return Mono.fromFuture(() -> client.repositoryIndex(false, callTimeout))
                .map(index -> answer + "; its repository index lists " + index.getModelsList().stream()
                        .map(m -> m.getName() + (m.getVersion().isEmpty() ? "" : ":" + m.getVersion()))
                        .limit(10).collect(Collectors.joining(", ", "[", "]")))
                .onErrorReturn(answer)
                .map(detail -> new Result(false, true, "the replica does not serve the registered model version: "
                        + detail));
    }

    /** Whether the declared input datatype is one the gateway sends for {@code inputType}. */
    private static Result inputTypeFits(ModelMetadataResponse md, String model, String version, String inputType) {
        TensorType<?> type = TensorType.forName(inputType);
        if (md.getInputsCount() != 1) {
            return new Result(true, false, "ModelMetadata(" + model + ", version " + version + ") declares "
                    + md.getInputsCount() + " inputs; the gateway sends one");
        }
        String declared = md.getInputs(0).getDatatype();
        boolean fits = type.carriedBy(declared);
        String what = "ModelMetadata(" + model + ", version " + version + ") declares input '"
                + md.getInputs(0).getName() + "' " + declared + " " + md.getInputs(0).getShapeList();
        return fits ? new Result(true, false, what)
                : new Result(false, true, what + ", but the model is registered with input type '" + inputType
                        + "' (" + type.datatype() + (type == TensorType.BYTES ? " or UINT8" : "") + ")");
    }

    private static String describe(Throwable e) {
        Status s = Status.fromThrowable(e);
        return s.getCode() == Status.Code.UNKNOWN ? String.valueOf(e.getMessage())
                : s.getCode() + (s.getDescription() == null ? "" : " " + s.getDescription());
    }

    /**
     * Checks every {@code interval} until ready; emits true once ready, or false when
     * {@code timeout} passes first.
     */
    public Mono<Boolean> awaitReady(String address, String model, String version, Duration timeout) {
        return await(address, model, version, null, timeout).map(Result::ready);
    }

    /**
     * Checks every {@code interval} until ready or a {@linkplain Result#mismatch mismatch}, and
     * emits that result; when {@code timeout} passes first, the last check's (not ready), its
     * detail saying for how long it was tried.
     */
    public Mono<Result> await(String address, String model, String version, String inputType, Duration timeout) {
        AtomicReference<Result> last = new AtomicReference<>(new Result(false, false, "no check answered"));
        return inspect(address, model, version, inputType)
                .doOnNext(last::set)
                .filter(r -> r.ready() || r.mismatch())
                .repeatWhenEmpty(Integer.MAX_VALUE, attempts -> attempts.delayElements(interval, scheduler))
                .timeout(timeout, Mono.fromSupplier(() -> new Result(false, false, "not ready within " + timeout
                        + ", checked every " + interval + "; the last check: " + last.get().detail())), scheduler);
    }

    /** A step that failed, carrying what it tried and what came back. */
    private static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed(String message) {
            super(message, null, false, false);
        }
    }
}
