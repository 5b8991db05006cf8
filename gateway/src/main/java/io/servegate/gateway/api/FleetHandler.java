package io.servegate.gateway.api;

import io.servegate.gateway.fleet.FleetReport;
import io.servegate.gateway.fleet.Ownership;
import io.servegate.gateway.registry.Registry;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/** {@code GET /admin/get_fleet}: the gateways sharing this one's registry and who schedules what ({@link FleetReport}). */
public final class FleetHandler {

    private final Ownership ownership;
    private final Registry registry;

    public FleetHandler(Ownership ownership, Registry registry) {
        this.ownership = ownership;
        this.registry = registry;
    }

    public Mono<ServerResponse> getFleet(ServerRequest request) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON)
                .bodyValue(FleetReport.of(ownership, registry.snapshot()));
    }
}
