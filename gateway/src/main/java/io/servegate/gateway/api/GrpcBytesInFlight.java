package io.servegate.gateway.api;

import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.config.ServegateProperties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * Admission by request-message bytes on a gRPC port (OIP, fleet), the counterpart of the HTTP ports'
 * {@link BodyBytesInFlight}. grpc-java buffers a message whole before handing it over, and the length
 * in its 5-byte header is not public, so bytes are counted as they are buffered: a stream tracer hears
 * each chunk of a message body ({@code inboundWireSize}) and what a compressed message inflates to
 * ({@code inboundUncompressedSize}); a call holds the larger. A call whose next chunk would take the
 * port over its budget is closed at once with {@code RESOURCE_EXHAUSTED}, which ends its stream and
 * frees its buffer. A call's bytes stay counted until it ends: once decoded, its request lives as long.
 *
 * <p>No call is refused while it holds less than {@link #ALWAYS_ADMITTED}, grpc-netty's HTTP/2
 * flow-control window, which every stream may buffer anyway, unless the port already holds twice its
 * budget: the large calls of a flood take the refusals and small queries still pass, while a flood of
 * many small calls (on many streams, which the connection guard caps per connection) still meets a
 * ceiling. Calls are closed through the call an interceptor handed the
 * application, made idempotent, so a refusal and the application's own answer never both close it.
 */
public final class GrpcBytesInFlight implements UnaryOperator<NettyServerBuilder> {

    /** grpc-netty's default flow-control window per stream (NettyServerBuilder.DEFAULT_FLOW_CONTROL_WINDOW). */
    static final long ALWAYS_ADMITTED = 1 << 20;

    private static final Context.Key<Call> CALL = Context.key("servegate-grpc-bytes-in-flight");

    private final long budget;
    private final AtomicLong inFlight;
    private final Counter refusals;

    /**
     * @param port   the port's name in metrics
     * @param budget most request bytes the port's calls may hold at once
     */
    public GrpcBytesInFlight(String port, long budget, MeterRegistry meters) {
        this.budget = budget;
        this.inFlight = BodyBytesInFlight.gauge(port, meters);
        this.refusals = BodyBytesInFlight.refusedCounter(port, meters);
    }

    /** The admission of the gRPC port named {@code port}, within {@code servegate.connections.max-body-bytes-in-flight}. */
    public static GrpcBytesInFlight of(ServegateProperties props, String port, MeterRegistry meters) {
        return new GrpcBytesInFlight(port, BodyBytesInFlight.budget(props.connections().maxBodyBytesInFlight().toBytes(),
                props.limits().maxBodySize().toBytes()), meters);
    }

    @Override
    public NettyServerBuilder apply(NettyServerBuilder builder) {
        return builder.addStreamTracerFactory(new ServerStreamTracer.Factory() {
            @Override
            public ServerStreamTracer newServerStreamTracer(String method, Metadata headers) {
                return new Call();
            }
        }).intercept(new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                Call tracked = CALL.get();
                return next.startCall(tracked == null ? call : tracked.attach(call), headers);
            }
        });
    }

    /** Request bytes the port's calls hold now. */
    public long inFlight() {
        return inFlight.get();
    }

    /** One call's bytes, from its stream's first body byte to its end; reached from the call's context. */
    private final class Call extends ServerStreamTracer {

        private long wire;
        private long inflated;
        private long held;
        private boolean refused;
        private boolean ended;
        private ServerCall<?, ?> call;

        @Override
        public Context filterContext(Context context) {
            return context.withValue(CALL, this);
        }

        /** The application's view of the call, made closable by either side once only; closed at once if already refused. */
        <Q, R> ServerCall<Q, R> attach(ServerCall<Q, R> delegate) {
            ServerCall<Q, R> once = new ClosesOnce<>(delegate);
            boolean refuseNow;
            synchronized (this) {
                call = once;
                refuseNow = refused && !ended;
            }
            if (refuseNow) {
                refuse(once);
            }
            return once;
        }

        @Override
        public void inboundWireSize(long bytes) {
            grow(bytes, 0);
        }

        @Override
        public void inboundUncompressedSize(long bytes) {
            grow(0, bytes);
        }

        private void grow(long wireBytes, long inflatedBytes) {
            ServerCall<?, ?> refusing;
            synchronized (this) {
                if (refused || ended) {
                    return;
                }
                wire += wireBytes;
                inflated += inflatedBytes;
                long more = Math.max(wire, inflated) - held;
                if (more <= 0) {
                    return;
                }
                long total = inFlight.addAndGet(more);
                if (total <= budget || held + more <= ALWAYS_ADMITTED && total <= 2 * budget) {
                    held += more;
                    return;
                }
                inFlight.addAndGet(-more);
                refused = true;
                refusing = call; // null only before the call starts; attach refuses it then
            }
            if (refusing != null) {
                refuse(refusing);
            }
        }

        private void refuse(ServerCall<?, ?> c) {
            refusals.increment();
            c.close(Status.RESOURCE_EXHAUSTED.withDescription("too many request bytes in flight on this port "
                    + "(budget " + budget + " bytes); retry shortly"), new Metadata());
        }

        @Override
        public void streamClosed(Status status) {
            long release;
            synchronized (this) {
                ended = true;
                release = held;
                held = 0;
            }
            inFlight.addAndGet(-release);
        }
    }

    /**
     * A call closed by the first of the application and a refusal; the other's close does nothing,
     * and what the application sends after a refusal is dropped (a refusal can land after the request
     * reached the application, which still answers it).
     */
    private static final class ClosesOnce<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {

        private boolean closed;

        ClosesOnce(ServerCall<Q, R> delegate) {
            super(delegate);
        }

        @Override
        public synchronized void sendHeaders(Metadata headers) {
            if (!closed) {
                super.sendHeaders(headers);
            }
        }

        @Override
        public synchronized void sendMessage(R message) {
            if (!closed) {
                super.sendMessage(message);
            }
        }

        @Override
        public synchronized void close(Status status, Metadata trailers) {
            if (!closed) {
                closed = true;
                super.close(status, trailers);
            }
        }
    }
}
