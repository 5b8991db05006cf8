package io.servegate.gateway.warmup;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.TensorType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The warm-up's exercise of the gateway's own query path, in rounds, until a round's time is
 * steady ({@link SteadyLatency}) or the time allowed is spent. Each round makes, concurrently:
 * OIP REST infer and Clipper predict calls to this gateway's query port over loopback (the HTTP
 * server, body admission, both JSON parsers, routing and the JSON error answer: the model and app
 * {@value #MODEL} exist nowhere, so each call ends in a 404 after its body was parsed);
 * OIP gRPC {@code ModelInfer} calls to its own gRPC port (protobuf decoding, the same model
 * lookup, a NOT_FOUND); batches through the container client to a {@link LoopbackContainer}
 * (encoding, the gRPC client transport, decoding); and, once its replica is checked and profiled,
 * queries through a private replica pool on that container ({@link SchedulerExercise}: the
 * scheduler, its driver, batching, the replica worker) and, in a fleet, the same queries forwarded
 * to that pool through this gateway's own fleet port (the hop's sending and receiving ends). No call reaches a registered model, a real
 * replica or the prediction cache. It is over once the pool's queries are in the rounds, their
 * time is steady and the JIT compilers spent at most the same tolerance of the last round
 * compiling ({@link CompilerActivity}).
 */
final class SelfExercise {

    /** A model name that no registry accepts (it holds a space), so no user's model is ever named. */
    static final String MODEL = "servegate warm-up";
    private static final String PATH_MODEL = "servegate%20warm-up";
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);
    private static final int ROW_LENGTH = 16;
    private static final int BATCH_ROWS = 8;

    /** What one warm-up did. */
    /** @param forwards queries forwarded over the fleet hop and answered by the private pool */
    record Result(long nanos, int rounds, boolean steady, long forwards) {
    }

    private final String httpHost;
    private final int httpPort;
    private final String grpcHost;
    private final int grpcPort;
    private final int callsPerRound;
    private final Duration maxDuration;
    private final SteadyLatency steady;
    private final Function<String, SchedulerExercise> schedulerOn;
    private final LongSupplier clock;

    /**
     * @param httpHost      where this gateway reaches its own query port (loopback, unless bound to one address)
     * @param httpPort      its query port
     * @param grpcHost      where it reaches its own OIP gRPC port
     * @param grpcPort      that port; 0 = none, not exercised
     * @param callsPerRound calls of each kind a round makes, at once
     * @param schedulerOn   the scheduler exercise on the loopback container at a given address
     */
    SelfExercise(String httpHost, int httpPort, String grpcHost, int grpcPort, int callsPerRound,
            Duration maxDuration, SteadyLatency steady, Function<String, SchedulerExercise> schedulerOn,
            LongSupplier clock) {
        this.httpHost = httpHost;
        this.httpPort = httpPort;
        this.grpcHost = grpcHost;
        this.grpcPort = grpcPort;
        this.callsPerRound = callsPerRound;
        this.maxDuration = maxDuration;
        this.steady = steady;
        this.schedulerOn = schedulerOn;
        this.clock = clock;
    }

    /** Runs the rounds on the calling thread (not an event loop: it waits for each round). */
    Result run() {
        long start = clock.getAsLong();
        long end = start + maxDuration.toNanos();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CALL_TIMEOUT).build();
        ManagedChannel channel = grpcPort == 0 ? null
                : NettyChannelBuilder.forAddress(grpcHost, grpcPort).usePlaintext().build();
        try (LoopbackContainer container = LoopbackContainer.start();
                ContainerClient client = ContainerClient.connect(container.address());
                SchedulerExercise scheduler = schedulerOn.apply(container.address())) {
            CompilerActivity compilers = new CompilerActivity();
            LongAdder forwarded = new LongAdder();
            boolean settled = false;
            while (!settled && clock.getAsLong() - end < 0) {
                boolean scheduled = scheduler.ready();
                long roundStart = clock.getAsLong();
                round(http, channel, client, scheduled ? scheduler : null, forwarded);
                long took = clock.getAsLong() - roundStart;
                // both looks every round: each keeps its own history
                boolean quiet = compilers.quiet(took, steady.tolerance());
                settled = steady.add(took) && quiet && scheduled;
            }
            return new Result(clock.getAsLong() - start, steady.rounds(), settled, forwarded.sum());
        } finally {
            if (channel != null) {
                channel.shutdownNow();
                try {
                    channel.awaitTermination(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** One round; {@code scheduler} is null while its replica is not ready yet; answered forwards are added up in {@code forwarded}. */
    private void round(HttpClient http, ManagedChannel channel, ContainerClient client, SchedulerExercise scheduler,
            LongAdder forwarded) {
        List<CompletableFuture<?>> calls = new ArrayList<>();
        float[] row = new float[ROW_LENGTH];
        String base = "http://" + (httpHost.contains(":") ? "[" + httpHost + "]" : httpHost) + ":" + httpPort;
        HttpRequest request = post(base + "/v2/models/" + PATH_MODEL + "/infer", inferBody());
        HttpRequest predict = post(base + "/" + PATH_MODEL + "/predict", predictBody());
        EncodedTensor tensor = TensorType.FLOATS.encode(Collections.nCopies(BATCH_ROWS, row));
        ModelInferRequest grpcRequest = ModelInferRequest.newBuilder().setModelName(MODEL)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input")
                        .setDatatype(tensor.datatype()).addAllShape(tensor.shape()))
                .addRawInputContents(tensor.raw()).build();
        for (int i = 0; i < callsPerRound; i++) {
            calls.add(http.sendAsync(request, HttpResponse.BodyHandlers.discarding()));
            calls.add(http.sendAsync(predict, HttpResponse.BodyHandlers.discarding()));
            calls.add(client.inferAsText(MODEL, "1", TensorType.FLOATS, Collections.nCopies(BATCH_ROWS, row),
                    CALL_TIMEOUT));
            if (scheduler != null) {
                calls.add(scheduler.query(row));
                if (scheduler.forwards()) {
                    calls.add(scheduler.forward(row).thenRun(forwarded::increment));
                }
            }
            if (channel != null) {
                CompletableFuture<Void> answered = new CompletableFuture<>();
                GRPCInferenceServiceGrpc.newFutureStub(channel)
                        .withDeadlineAfter(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).modelInfer(grpcRequest)
                        .addListener(() -> answered.complete(null), Runnable::run);
                calls.add(answered);
            }
        }
        // an error answer (the 404, the NOT_FOUND) is as much an exercise as a success
        CompletableFuture.allOf(calls.stream().map(c -> c.handle((x, e) -> null)).toArray(CompletableFuture[]::new))
                .join();
    }

    private static HttpRequest post(String url, String json) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(CALL_TIMEOUT).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
    }

    private static String predictBody() {
        return "{\"input\":[" + String.join(",", Collections.nCopies(ROW_LENGTH, "0.0")) + "]}";
    }

    private static String inferBody() {
        StringBuilder data = new StringBuilder();
        for (int i = 0; i < ROW_LENGTH; i++) {
            data.append(i == 0 ? "" : ",").append("0.0");
        }
        return "{\"id\":\"warm-up\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1," + ROW_LENGTH
                + "],\"data\":[" + data + "]}]}";
    }
}
