package io.servegate.gateway.api;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The request bytes each client (remote address) holds on one port, each within its share of the
 * port's budget: the per-client half of body admission ({@link BodyBytesInFlight} on the HTTP
 * ports, {@link GrpcBytesInFlight} on the gRPC ports), so that one client's large requests leave
 * room for the others'. Only clients with bytes in flight are held, so the map is bounded by the
 * port's connections. Refusals are counted in {@code servegate.connections.body.client.refused}.
 * Thread-safe.
 */
final class ClientShares {

    private final long share;
    private final Map<InetAddress, Long> held = new ConcurrentHashMap<>();
    private final Counter refused;

    /** @param share most bytes one client's requests may hold at once */
    ClientShares(String port, long share, MeterRegistry meters) {
        this.share = share;
        this.refused = Counter.builder("servegate.connections.body.client.refused")
                .description("requests refused (HTTP 429, gRPC RESOURCE_EXHAUSTED) because their client's body "
                        + "bytes in flight were at its share")
                .tag("port", port).register(meters);
    }

    long share() {
        return share;
    }

    /** Adds {@code bytes} to the client's unless that would take it over {@code limit}; whether it did. */
    boolean reserve(InetAddress client, long bytes, long limit) {
        if (bytes == 0) {
            return true;
        }
        boolean[] admitted = {false};
        held.compute(client, (c, now) -> {
            long before = now == null ? 0 : now;
            if (before + bytes > limit) {
                return now;
            }
            admitted[0] = true;
            return before + bytes;
        });
        return admitted[0];
    }

    /** As {@link #reserve(InetAddress, long, long)} within the share. */
    boolean reserve(InetAddress client, long bytes) {
        return reserve(client, bytes, share);
    }

    /** Gives the client's bytes back; a client with none left is forgotten. */
    void release(InetAddress client, long bytes) {
        if (client != null && bytes > 0) {
            held.computeIfPresent(client, (c, now) -> now == bytes ? null : now - bytes);
        }
    }

    void refused() {
        refused.increment();
    }
}
