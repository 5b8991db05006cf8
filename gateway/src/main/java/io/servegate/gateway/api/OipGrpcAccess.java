package io.servegate.gateway.api;

import io.grpc.Context;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.servegate.core.scheduling.Tenant;
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
 * held until the check, which never blocks, has answered. A call let through by an app's key runs
 * with that app's {@link Tenant} in {@link #TENANT}, so it is scheduled as the app's query.
 */
public final class OipGrpcAccess implements ServerInterceptor {

    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> RETRY_AFTER = Metadata.Key.of("retry-after", Metadata.ASCII_STRING_MARSHALLER);
    /** The tenant a call is scheduled as: its key's app's; absent (the default tenant) for a call without one. */
    static final Context.Key<Tenant> TENANT = Context.keyWithDefault("servegate-tenant", Tenant.DEFAULT);

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
        Context callContext = Context.current();
        ServerCall.Listener<Q> delegate = next.startCall(call, headers);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
            private boolean delivered; // guarded by this
            private boolean halfClosed; // guarded by this
            private boolean refused;    // guarded by this
            private Context tenantContext; // guarded by this; null: the call's own

            @Override
            public void onMessage(Q message) {
                String model = model(message);
                if (model == null) {
                    passed(message, Tenant.DEFAULT);
                    return;
                }
                access.model(registry.snapshot(), model, authorization).subscribe(v -> {
                    switch (v.outcome()) {
                        case PASS -> passed(message, v.tenant());
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

            private void passed(Q message, Tenant tenant) {
                // a unary call's method runs at half-close: both see the tenant
                Context context = tenant.equals(Tenant.DEFAULT) ? null : callContext.withValue(TENANT, tenant);
                synchronized (this) {
                    tenantContext = context;
                }
                within(context, () -> super.onMessage(message));
                boolean halfClose;
                synchronized (this) {
                    delivered = true;
                    halfClose = halfClosed;
                }
                if (halfClose) {
                    within(context, super::onHalfClose);
                }
            }

            private void within(Context context, Runnable r) {
                if (context == null) {
                    r.run();
                } else {
                    context.run(r);
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
                Context context;
                synchronized (this) {
                    if (refused || !delivered) {
                        halfClosed = true;
                        return;
                    }
                    context = tenantContext;
                }
                within(context, super::onHalfClose);
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
