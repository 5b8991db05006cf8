package io.servegate.gateway.connections;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of one HTTP/1.1 connection, as two Netty handlers around the HTTP codec: one
 * before it sees every read, one after it sees each request's head and end and each answer's end.
 * A connection is closed when
 * <ul>
 *   <li>a request's line and headers take longer than the header timeout, counted from the
 *       connection's start for its first request and from the first byte for later ones (bytes
 *       trickled in one at a time do not extend it);</li>
 *   <li>its body pauses longer than the read timeout, or takes longer than the request timeout;</li>
 *   <li>a kept-alive connection waits longer than the idle timeout for its next request.</li>
 * </ul>
 * While the gateway works on a request that has fully arrived, nothing is timed here: the query's
 * own deadline governs. While a request's body arrives or is handled, the connection counts as
 * busy ({@link ClientConnection#begin()}), so it is never evicted; waiting for a request's line
 * and headers, it is idle. All state is touched on the connection's event loop only.
 */
final class HttpRequestDeadlines {

    private enum Phase { HEADERS, BODY, HANDLING, IDLE }

    private final long headerNanos;
    private final long readNanos;
    private final long requestNanos;
    private final long idleNanos;
    private final PortConnections port;
    private final ClientConnection connection;

    private ChannelHandlerContext ctx;
    private boolean busy;
    private Phase phase = Phase.HEADERS;
    private long since;
    private long lastRead;
    /** The answer's end was written before the request's body had all arrived. */
    private boolean answered;
    private ScheduledFuture<?> timer;
    private long timerAt;
    /** Closed here for a deadline: the half request the codec then reports is already counted. */
    private boolean dropped;

    HttpRequestDeadlines(Duration header, Duration read, Duration request, Duration idle, PortConnections port,
            ClientConnection connection) {
        this.headerNanos = header.toNanos();
        this.readNanos = read.toNanos();
        this.requestNanos = request.toNanos();
        this.idleNanos = idle.toNanos();
        this.port = port;
        this.connection = connection;
    }

    /** Goes before the HTTP codec: every read, as bytes. */
    ChannelInboundHandlerAdapter reads() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void handlerAdded(ChannelHandlerContext context) {
                ctx = context;
                enter(Phase.HEADERS);
            }

            @Override
            public void channelRead(ChannelHandlerContext context, Object msg) {
                lastRead = System.nanoTime();
                if (phase == Phase.IDLE) {
                    enter(Phase.HEADERS);
                }
                context.fireChannelRead(msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext context) {
                if (timer != null) {
                    timer.cancel(false);
                }
                context.fireChannelInactive();
            }
        };
    }

    /** Goes after the HTTP codec: requests' heads and ends, answers' ends. */
    ChannelDuplexHandler messages() {
        return new ChannelDuplexHandler() {
            @Override
            public void channelRead(ChannelHandlerContext context, Object msg) {
                if (msg instanceof HttpRequest request && request.decoderResult().cause()
                        instanceof PrematureChannelClosureException) {
                    // the client left with its request half sent: count it, rather than have the
                    // server log a warning for each such connection
                    ReferenceCountUtil.release(msg);
                    if (!dropped) {
                        port.dropped(DropReason.ABANDONED);
                    }
                    return;
                }
                if (msg instanceof HttpRequest) {
                    enter(Phase.BODY);
                }
                if (msg instanceof LastHttpContent) {
                    enter(answered ? Phase.IDLE : Phase.HANDLING);
                    answered = false;
                }
                context.fireChannelRead(msg);
            }

            @Override
            public void write(ChannelHandlerContext context, Object msg, ChannelPromise promise) {
                // a 100 Continue is a whole message too, but no answer
                boolean informational = msg instanceof HttpResponse response
                        && response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
                if (msg instanceof LastHttpContent && !informational) {
                    if (phase == Phase.HANDLING) {
                        enter(Phase.IDLE);
                    } else if (phase == Phase.BODY) {
                        answered = true;
                    }
                }
                context.write(msg, promise);
            }
        };
    }

    private void enter(Phase next) {
        phase = next;
        boolean nowBusy = next == Phase.BODY || next == Phase.HANDLING;
        if (nowBusy != busy) {
            busy = nowBusy;
            if (busy) {
                connection.begin();
            } else {
                connection.end();
            }
        }
        since = System.nanoTime();
        lastRead = since;
        long deadline = deadline();
        if (deadline != Long.MAX_VALUE && (timer == null || deadline < timerAt)) {
            arm(deadline);
        }
    }

    /** When the current phase's time is up; {@link Long#MAX_VALUE} while the gateway handles a request. */
    private long deadline() {
        return switch (phase) {
            case HEADERS -> since + headerNanos;
            case BODY -> Math.min(since + requestNanos, lastRead + readNanos);
            case IDLE -> since + idleNanos;
            case HANDLING -> Long.MAX_VALUE;
        };
    }

    private void arm(long at) {
        if (timer != null) {
            timer.cancel(false);
        }
        timerAt = at;
        timer = ctx.executor().schedule(this::check, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void check() {
        timer = null;
        long deadline = deadline();
        if (deadline == Long.MAX_VALUE || !ctx.channel().isActive()) {
            return;
        }
        if (System.nanoTime() < deadline) {
            arm(deadline);
            return;
        }
        port.dropped(switch (phase) {
            case HEADERS -> DropReason.HEADER_TIMEOUT;
            case BODY -> since + requestNanos <= lastRead + readNanos ? DropReason.REQUEST_TIMEOUT
                    : DropReason.READ_TIMEOUT;
            default -> DropReason.IDLE_TIMEOUT;
        });
        dropped = true;
        ctx.channel().close();
    }
}
