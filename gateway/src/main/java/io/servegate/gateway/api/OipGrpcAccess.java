package io.servegate.gateway.api;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.servegate.gateway.access.QueryAccess;
import io.servegate.gateway.registry.Registry;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelReadyRequest;
import java.util.concurrent.TimeUnit;

/**
 * Query keys and quotas on the OIP gRPC calls that reach a model (ModelInfer, ModelMetadata,
 * ModelReady), as {@link QueryAccessFilter} on REST: the key is the {@code authorization}
 * metadata ({@code Bearer <key>}). A call without a valid key is closed UNAUTHENTICATED, one over
 * quota RESOURCE_EXHAUSTED (with a {@code retry-after} trailer in seconds). The request message is
 * held until the check, which never blocks, has answered.
 */
public final class OipGrpcAccess implements ServerInterceptor {

    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> RETRY_AFTER = Metadata.Key.of("retry-after", Metadata.ASCII_STRING_MARSHALLER);

    private final Registry registry;
    private final QueryAccess access;

    public OipGrpcAccess(Registry registry, QueryAccess access) {
        this.registry = registry;
        this.access = access;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
            ServerCallHandler<Q, A> next) {
        String authorization = headers.get(AUTHORIZATION);
        ServerCall.Listener<Q> delegate = next.startCall(call, headers);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
            private boolean delivered; // guarded by this
            private boolean halfClosed; // guarded by this
            private boolean refused;    // guarded by this

            @Override
            public void onMessage(Q message) {
                String model = model(message);
                if (model == null) {
                    passed(message);
                    return;
                }
                access.model(registry.snapshot(), model, authorization).subscribe(v -> {
                    switch (v.outcome()) {
                        case PASS -> passed(message);
                        case UNAUTHORIZED -> refuse(Status.UNAUTHENTICATED.withDescription(
                                QueryAccessFilter.cause(v.problem())), new Metadata());
                        case LIMITED -> {
                            Metadata trailers = new Metadata();
                            trailers.put(RETRY_AFTER, Long.toString(Math.max(1,
                                    TimeUnit.NANOSECONDS.toSeconds(v.retryAfterNanos() + 999_999_999L))));
                            refuse(Status.RESOURCE_EXHAUSTED.withDescription("over the query quota"), trailers);
                        }
                    }
                }, e -> refuse(Status.UNAVAILABLE.withDescription("query keys unavailable"), new Metadata()));
            }

            private void passed(Q message) {
                super.onMessage(message);
                boolean halfClose;
                synchronized (this) {
                    delivered = true;
                    halfClose = halfClosed;
                }
                if (halfClose) {
                    super.onHalfClose();
                }
            }

            private void refuse(Status status, Metadata trailers) {
                synchronized (this) {
                    refused = true;
                }
                call.close(status, trailers);
            }

            @Override
            public void onHalfClose() {
                synchronized (this) {
                    if (refused || !delivered) {
                        halfClosed = true;
                        return;
                    }
                }
                super.onHalfClose();
            }
        };
    }

    /** The model a call reaches; null for calls that reach none. */
    private static String model(Object message) {
        if (message instanceof ModelInferRequest r) {
            return r.getModelName();
        }
        if (message instanceof ModelMetadataRequest r) {
            return r.getName();
        }
        if (message instanceof ModelReadyRequest r) {
            return r.getName();
        }
        return null;
    }
}
