package io.servegate.gateway.fleet;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * Sends forwarded queries to the other gateways: one plaintext HTTP/2 channel per member address,
 * kept for the gateway's life, each call carrying the fleet's secret. Completions run on the
 * channel's event loop (nothing blocks there).
 */
public final class ForwardClient implements AutoCloseable {

    private final ConcurrentMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final int maxMessageBytes;
    private final FleetSecret secret;

    /**
     * @param maxMessageBytes the largest answer accepted
     * @param secret          presented on every call
     */
    public ForwardClient(int maxMessageBytes, FleetSecret secret) {
        this.maxMessageBytes = maxMessageBytes;
        this.secret = secret;
    }

    /**
     * Sends {@code request} to the gateway at {@code address} with {@code timeoutNanos} to answer in,
     * and {@code headers} (a trace context) in its metadata unless null.
     */
    CompletableFuture<ModelInferResponse> call(String address, ModelInferRequest request, long timeoutNanos,
            Metadata headers) {
        CompletableFuture<ModelInferResponse> answer = new CompletableFuture<>();
        Channel channel = headers == null ? channel(address)
                : ClientInterceptors.intercept(channel(address), MetadataUtils.newAttachHeadersInterceptor(headers));
        ClientCalls.asyncUnaryCall(channel.newCall(ForwardProtocol.PREDICT,
                CallOptions.DEFAULT.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)), request,
                new StreamObserver<>() {
                    @Override
                    public void onNext(ModelInferResponse value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new IllegalStateException("the gateway sent no answer"));
                    }
                });
        return answer;
    }

    /**
     * Sends a {@link ForwardProtocol#PREDICT_MANY} request to the gateway at {@code address}; its
     * answers, one per row, go to {@code answers} as they come.
     */
    void callMany(String address, ModelInferRequest request, long timeoutNanos,
            StreamObserver<ModelInferResponse> answers) {
        ClientCalls.asyncServerStreamingCall(channel(address).newCall(ForwardProtocol.PREDICT_MANY,
                CallOptions.DEFAULT.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)), request, answers);
    }

    /**
     * Opens connections to {@code addresses} ahead of their first query: gRPC fixes a call's
     * timeout when the call starts, so a call that waited for its connection would reach the
     * owner with that wait added to its deadline.
     */
    public void connect(Collection<String> addresses) {
        addresses.forEach(a -> channel(a).getState(true));
    }

    private ManagedChannel channel(String address) {
        ManagedChannel c = channels.get(address);
        return c != null ? c : channels.computeIfAbsent(address, a -> NettyChannelBuilder.forTarget(a)
                .usePlaintext().directExecutor().maxInboundMessageSize(maxMessageBytes).intercept(secret.sender())
                .build());
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
