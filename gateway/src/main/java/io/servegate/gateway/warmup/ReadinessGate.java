package io.servegate.gateway.warmup;

import java.util.concurrent.CompletableFuture;

/**
 * Whether this gateway takes queries: closed while it warms up (its readiness endpoints answer
 * not ready and it does not join a fleet), open once warm, closed again when it shuts down.
 * Liveness never looks at it.
 */
public final class ReadinessGate {

    private final CompletableFuture<Void> warm = new CompletableFuture<>();
    private volatile boolean stopping;

    /** A gate that is open from the start (warm-up off). */
    public static ReadinessGate open() {
        ReadinessGate gate = new ReadinessGate();
        gate.warmedUp();
        return gate;
    }

    /** The warm-up is over: the gateway may report ready and join a fleet. */
    public void warmedUp() {
        warm.complete(null);
    }

    /** Shutting down: report not ready from now on, so that balancers stop sending. */
    public void stopping() {
        stopping = true;
    }

    public boolean ready() {
        return warm.isDone() && !stopping;
    }

    /** Why not ready, for the readiness answer; empty when ready. */
    public String reason() {
        return stopping ? "shutting down" : warm.isDone() ? "" : "warming up";
    }

    /** Completes when the warm-up is over. */
    public CompletableFuture<Void> whenWarm() {
        return warm;
    }
}
