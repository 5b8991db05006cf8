package io.servegate.gateway.api;

import io.netty.channel.EventLoop;
import io.servegate.gateway.query.PredictionService;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

/**
 * A router filter that has the deadlines of a request's queries timed on the Netty event loop
 * the request arrived on ({@link PredictionService#timedOn}). Requests that did not come through
 * Reactor Netty keep the prediction service's own deadline thread.
 */
public final class EventLoopDeadlines implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    /** One Reactor view per loop; the loops live as long as the server, and are never disposed here. */
    private final Map<EventLoop, Scheduler> schedulers = new ConcurrentHashMap<>();

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
        Mono<ServerResponse> response = Mono.defer(() -> next.handle(request));
        if (!(nativeRequest instanceof Connection connection)) {
            return response;
        }
        Scheduler loop = schedulers.computeIfAbsent(connection.channel().eventLoop(),
                l -> Schedulers.fromExecutorService(l, "servegate-event-loop"));
        return response.contextWrite(context -> PredictionService.timedOn(context, loop));
    }
}
