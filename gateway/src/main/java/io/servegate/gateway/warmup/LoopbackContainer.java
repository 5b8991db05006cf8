package io.servegate.gateway.warmup;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.ServerReadyRequest;
import io.servegate.oip.ServerReadyResponse;
import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.TensorType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.concurrent.TimeUnit;

/**
 * A no-op model container inside the gateway, on a loopback port of its own, that the warm-up's
 * container client and its private replica pool call: it answers {@code ServerReady} with yes and
 * every row of a {@code ModelInfer} with {@code "0"}. No real replica, and so no user's model, sees
 * a warm-up call.
 */
final class LoopbackContainer implements AutoCloseable {

    private final Server server;

    private LoopbackContainer(Server server) {
        this.server = server;
    }

    static LoopbackContainer start() {
        try {
            Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .directExecutor().addService(new NoOp()).build().start();
            return new LoopbackContainer(server);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the warm-up's loopback container", e);
        }
    }

    /** Where the container client reaches it, as {@code host:port}. */
    String address() {
        return InetAddress.getLoopbackAddress().getHostAddress() + ":" + server.getPort();
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class NoOp extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {
        @Override
        public void serverReady(ServerReadyRequest request, StreamObserver<ServerReadyResponse> answer) {
            answer.onNext(ServerReadyResponse.newBuilder().setReady(true).build());
            answer.onCompleted();
        }

        @Override
        public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> answer) {
            int rows = request.getInputsCount() == 0 || request.getInputs(0).getShapeCount() == 0 ? 1
                    : (int) request.getInputs(0).getShape(0);
            EncodedTensor out = TensorType.STRINGS.encode(Collections.nCopies(rows, "0"));
            answer.onNext(ModelInferResponse.newBuilder().setModelName(request.getModelName())
                    .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("output")
                            .setDatatype(out.datatype()).addAllShape(out.shape()))
                    .addRawOutputContents(out.raw()).build());
            answer.onCompleted();
        }
    }
}
