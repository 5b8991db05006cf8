package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.servegate.core.cache.PredictionCache;
import io.servegate.gateway.query.PredictionService;
import io.servegate.gateway.registry.Application;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** Over a real Reactor Netty server on loopback: where a query's deadline fires and its default is made. */
class EventLoopDeadlinesTest {

    private static final Application APP = new Application("app", "floats", "fallback", 30_000, List.of("m"));

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final Scheduler deadlineThread = Schedulers.newSingle("own-deadline-thread", true);
    /** A container that never answers: every query ends at its deadline. */
    private final PredictionService predictions = new PredictionService(new PredictionCache(false, 1 << 20, meters),
            (model, version, input, deadline) -> new CompletableFuture<>(), System::nanoTime, meters, Duration.ZERO,
            deadlineThread, deadlineThread);
    private DisposableServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.disposeNow();
        }
        deadlineThread.dispose();
    }

    /** Serves GET /q through the router, with or without the filter; returns the thread that made the default. */
    private String defaultMadeOn(boolean filtered) {
        AtomicReference<String> madeOn = new AtomicReference<>();
        var routes = RouterFunctions.route().GET("/q", request -> predictions.predict(APP, "m", "1", TensorType.FLOATS,
                        new float[] {1f}, System.nanoTime())
                .doOnNext(p -> madeOn.set(Thread.currentThread().getName()))
                .flatMap(p -> ServerResponse.ok().bodyValue(p.output())));
        if (filtered) {
            routes.filter(new EventLoopDeadlines());
        }
        server = HttpServer.create().host("127.0.0.1").port(0)
                .handle(new ReactorHttpHandlerAdapter(RouterFunctions.toHttpHandler(routes.build()))).bindNow();
        String body = HttpClient.create().get().uri("http://127.0.0.1:" + server.port() + "/q")
                .responseContent().aggregate().asString().block(Duration.ofSeconds(10));
        assertThat(body).isEqualTo("fallback");
        return madeOn.get();
    }

    @Test
    void theDefaultIsMadeOnTheEventLoopTheRequestArrivedOn() {
        assertThat(defaultMadeOn(true)).startsWith("reactor-http-");
    }

    @Test
    void withoutTheFilterTheServicesOwnDeadlineThreadMakesIt() {
        assertThat(defaultMadeOn(false)).startsWith("own-deadline-thread");
    }
}
