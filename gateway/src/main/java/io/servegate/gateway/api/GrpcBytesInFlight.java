package io.servegate.gateway.api;

import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
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
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
 *
 * <p>Each client (remote address) holds at most its share of the budget ({@link ClientShares}), by
 * the same rules (a call under {@link #ALWAYS_ADMITTED} is refused only once its client holds twice
 * its share). The client is known once its call starts: what a stream buffered before that, at
 * most a flow-control window, is charged to its client then.
 */
public final class GrpcBytesInFlight implements UnaryOperator<NettyServerBuilder> {

    /** grpc-netty's default flow-control window per stream (NettyServerBuilder.DEFAULT_FLOW_CONTROL_WINDOW). */
    static final long ALWAYS_ADMITTED = 1 << 20;

    private static final Context.Key<Call> CALL = Context.key("servegate-grpc-bytes-in-flight");

    private final long budget;
    private final AtomicLong inFlight;
    private final ClientShares clients;
    private final Counter refusals;

    /**
     * @param port        the port's name in metrics
     * @param budget      most request bytes the port's calls may hold at once
     * @param clientShare most request bytes the calls of one remote address may hold at once
     */
    public GrpcBytesInFlight(String port, long budget, long clientShare, MeterRegistry meters) {
        this.budget = budget;
        this.inFlight = BodyBytesInFlight.gauge(port, meters);
        this.clients = new ClientShares(port, clientShare, meters);
        this.refusals = BodyBytesInFlight.refusedCounter(port, meters);
    }

    /**
     * The admission of the gRPC port named {@code port}, within {@code servegate.connections.max-body-bytes-in-flight}
     * and, per client, {@code max-body-bytes-in-flight-per-client}.
     */
    public static GrpcBytesInFlight of(ServegateProperties props, String port, MeterRegistry meters) {
        BodyBytesInFlight.Limits limits = BodyBytesInFlight.Limits.of(props);
        return new GrpcBytesInFlight(port, limits.budget(), limits.clientShare(), meters);
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

    /** The most a holder of {@code limit} may hold with a call of {@code callBytes}: calls under a flow-control window, twice it. */
    private static long limit(long limit, long callBytes) {
        return callBytes <= ALWAYS_ADMITTED ? 2 * limit : limit;
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
        /** Its client, once the call started, and how much of {@link #held} is charged to it. */
        private InetAddress client;
        private long charged;
        private String refusal;
        private boolean ended;
        private ServerCall<?, ?> call;

        @Override
        public Context filterContext(Context context) {
            return context.withValue(CALL, this);
        }

        /** The application's view of the call, made closable by either side once only; closed at once if already refused. */
        <Q, R> ServerCall<Q, R> attach(ServerCall<Q, R> delegate) {
            ServerCall<Q, R> once = new ClosesOnce<>(delegate);
            String refuseNow;
            synchronized (this) {
                call = once;
                refuseNow = ended ? null : refusal;
            }
            if (refuseNow != null) {
                refuse(once, refuseNow);
            }
            return once;
        }

        /** The call's client is known: what the stream holds is charged to it now. */
        @Override
        public void serverCallStarted(ServerStreamTracer.ServerCallInfo<?, ?> info) {
            if (!(info.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) instanceof InetSocketAddress remote)) {
                return;
            }
            ServerCall<?, ?> refusing;
            String why;
            synchronized (this) {
                if (refusal != null || ended) {
                    return;
                }
                client = remote.getAddress();
                if (clients.reserve(client, held, limit(clients.share(), held))) {
                    charged = held;
                    return;
                }
                why = clientRefusal();
                refusal = why;
                refusing = call; // null while the call is not attached; attach, which comes next, refuses it then
            }
            if (refusing != null) {
                refuse(refusing, why);
            }
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
            String why;
            synchronized (this) {
                if (refusal != null || ended) {
                    return;
                }
                wire += wireBytes;
                inflated += inflatedBytes;
                long more = Math.max(wire, inflated) - held;
                if (more <= 0) {
                    return;
                }
                why = admit(more);
                if (why == null) {
                    return;
                }
                refusal = why;
                refusing = call; // null only before the call starts; attach refuses it then
            }
            if (refusing != null) {
                refuse(refusing, why);
            }
        }

        /** Charges {@code more} bytes to the port and the call's client; null if admitted, else why not (nothing charged). */
        private String admit(long more) {
            long after = held + more;
            if (client != null && !clients.reserve(client, more, limit(clients.share(), after))) {
                return clientRefusal();
            }
            long total = inFlight.addAndGet(more);
            if (total > limit(budget, after)) {
                inFlight.addAndGet(-more);
                clients.release(client, more);
                refusals.increment();
                return "too many request bytes in flight on this port (budget " + budget + " bytes); retry shortly";
            }
            held = after;
            charged += client != null ? more : 0;
            return null;
        }

        private String clientRefusal() {
            clients.refused();
            return "too many request bytes in flight from this client (its share is " + clients.share()
                    + " bytes); retry once its earlier calls are answered";
        }

        private void refuse(ServerCall<?, ?> c, String why) {
            c.close(Status.RESOURCE_EXHAUSTED.withDescription(why), new Metadata());
        }

        @Override
        public void streamClosed(Status status) {
            long release;
            long releaseClient;
            InetAddress of;
            synchronized (this) {
                ended = true;
                release = held;
                releaseClient = charged;
                of = client;
                held = 0;
                charged = 0;
            }
            inFlight.addAndGet(-release);
            clients.release(of, releaseClient);
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
