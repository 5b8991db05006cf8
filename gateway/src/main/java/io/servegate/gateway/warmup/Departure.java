package io.servegate.gateway.warmup;

import io.servegate.gateway.fleet.FleetNode;
import org.springframework.context.SmartLifecycle;

/**
 * The first step of a shutdown, before the web server's graceful shutdown stops taking requests:
 * the gateway reports not ready (balancers stop sending) and hands its fleet versions to the
 * other gateways ({@link FleetNode#leave}: each scheduled here until its next owner is ready), so
 * that they own them while this one still answers, or forwards, what reaches it.
 */
public final class Departure implements SmartLifecycle {

    private final ReadinessGate gate;
    private final FleetNode fleet;
    private volatile boolean running;

    /** @param fleet this gateway's fleet node, or null outside a fleet */
    public Departure(ReadinessGate gate, FleetNode fleet) {
        this.gate = gate;
        this.fleet = fleet;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        gate.stopping();
        if (fleet != null) {
            fleet.leave();
        }
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stopped before the web servers (whose graceful shutdown runs at {@code DEFAULT_PHASE - 1024}). */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE;
    }
}
