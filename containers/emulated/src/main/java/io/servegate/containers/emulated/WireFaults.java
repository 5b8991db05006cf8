package io.servegate.containers.emulated;

import com.google.protobuf.ByteString;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import java.util.List;

/**
 * Corrupts ModelInfer responses on the wire, which a well-behaved predictor cannot do (the SDK
 * checks its outputs): {@code garbage} replaces the output tensor's bytes with an element whose
 * declared length runs past the end; {@code wrong-count} drops the last output of the batch.
 */
final class WireFaults implements ServerInterceptor {

    /** The faults this interceptor can inject. */
    enum Kind { GARBAGE, WRONG_COUNT }

    private static final ByteString GARBAGE = ByteString.copyFrom(new byte[] {(byte) 0xff, 0x7f, 0x7f, 0x7f, 'x'});

    private final Kind kind;
    private final FaultWindow window;

    WireFaults(Kind kind, FaultWindow window) {
        this.kind = kind;
        this.window = window;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            @SuppressWarnings("unchecked")
            public void sendMessage(R message) {
                super.sendMessage(message instanceof ModelInferResponse r && window.hits() ? (R) corrupt(r) : message);
            }
        }, headers);
    }

    ModelInferResponse corrupt(ModelInferResponse r) {
        if (r.getRawOutputContentsCount() != 1 || r.getOutputsCount() != 1) {
            return r;
        }
        if (kind == Kind.GARBAGE) {
            return r.toBuilder().setRawOutputContents(0, GARBAGE).build();
        }
        ModelInferResponse.InferOutputTensor out = r.getOutputs(0);
        List<String> labels = TensorType.STRINGS.decode(out.getDatatype(), out.getShapeList(), r.getRawOutputContents(0));
        List<String> fewer = labels.subList(0, labels.size() - 1);
        // a batch of one gets no output at all: the encoder refuses an empty batch, and an exception
        // here would leave the call unanswered, a timeout instead of the wrong count asked for
        return r.toBuilder()
                .setOutputs(0, out.toBuilder().setShape(0, fewer.size()))
                .setRawOutputContents(0, fewer.isEmpty() ? ByteString.EMPTY : TensorType.STRINGS.encode(fewer).raw())
                .build();
    }
}
