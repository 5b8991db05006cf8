package io.servegate.gateway.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.servegate.gateway.api.GrpcRequestTracing;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.InMemoryRegistry;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.testsupport.OtlpReceiver;
import io.servegate.gateway.testsupport.OtlpReceiver.Received;
import io.servegate.gateway.tracing.OtlpProtocol;
import io.servegate.gateway.tracing.OtlpTracing;
import io.servegate.gateway.tracing.QueryTrace;
import io.servegate.gateway.tracing.RequestTrace;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A forwarded query's trace crosses the fleet's hop: the sending gateway's {@code forward} client
 * span carries its context in the call's metadata, and the owning gateway's server span and
 * prediction continue it. Both gateways export to one real OTLP receiver on loopback.
 */
class FleetTracingTest {

    @Test
    void theOwnersSpansContinueTheSendersTraceAcrossTheHop() throws Exception {
        try (OtlpReceiver receiver = OtlpReceiver.start();
                InMemoryRegistry registry = new InMemoryRegistry();
                ForwardClient client = new ForwardClient(1 << 20, FleetSecret.of(""))) {
            registry.addModel(new ModelVersion("m", "1", List.of(), "floats", "c", "/m", 1)).block();
            OtlpTracing sender = OtlpTracing.start(OtlpProtocol.GRPC, receiver.endpoint(), 1.0, "sender",
                    Duration.ofSeconds(10));
            OtlpTracing owner = OtlpTracing.start(OtlpProtocol.GRPC, receiver.endpoint(), 1.0, "owner",
                    Duration.ofSeconds(10));
            Dispatcher ownerPool = (model, version, input, deadline) ->
                    CompletableFuture.completedFuture("out" + ((float[]) input)[0]);
            Server ownerServer = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                    .addService(ServerInterceptors.intercept(new ForwardService(registry, ownerPool, Ownership.SOLO,
                            client, System::nanoTime, 1 << 20).bindService(),
                            new GrpcRequestTracing(owner.tracing(), Set.of(ForwardProtocol.PREDICT.getFullMethodName()))))
                    .build().start();
            try {
                FleetDispatcher forwarder = new FleetDispatcher((m, v, i, d) -> CompletableFuture.failedFuture(
                        new AssertionError("not local")), ownedBy("127.0.0.1:" + ownerServer.getPort()), client,
                        1 << 20, registry, new ArrivalRates(System::nanoTime), System::nanoTime, new SimpleMeterRegistry());
                RequestTrace request = sender.tracing().startRequest("POST /{app}/predict", Context.root(),
                        Attributes.empty());
                QueryTrace query = request.startQuery("m", "1");
                CompletableFuture<String> answer;
                try (Scope ignored = query.makeCurrent()) {
                    answer = forwarder.submit("m", "1", new float[] {4f, 2f},
                            System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
                }
                assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("out4.0");
                query.answered();
                request.end(AttributeKey.longKey("http.response.status_code"), 200, null);
            } finally {
                ownerServer.shutdownNow();
                sender.close(); // sends what is queued
                owner.close();
            }
            Received forward = receiver.spans().stream().filter(s -> s.name().equals("forward")).findFirst()
                    .orElseThrow(() -> new AssertionError("no forward span: " + receiver.spans()));
            List<Received> trace = receiver.await(forward.traceId(), spans -> spans.size() >= 5, Duration.ofSeconds(5));
            Received sent = one(trace, "sender", "predict m:1");
            Received served = one(trace, "owner", ForwardProtocol.PREDICT.getFullMethodName());
            Received owned = one(trace, "owner", "predict m:1");
            assertThat(forward.service()).isEqualTo("sender");
            assertThat(forward.parentId()).isEqualTo(sent.spanId());
            assertThat(forward.attribute("servegate.fleet.member")).isEqualTo("owner");
            assertThat(served.parentId()).as("the owner continues the hop's span").isEqualTo(forward.spanId());
            assertThat(owned.parentId()).isEqualTo(served.spanId());
            assertThat(owned.attribute("servegate.outcome")).isEqualTo("answered");
        }
    }

    private static Received one(List<Received> trace, String service, String name) {
        List<Received> found = trace.stream().filter(s -> s.service().equals(service) && s.name().equals(name))
                .toList();
        assertThat(found).as(service + " " + name + " in " + trace.stream().map(Received::name).toList()).hasSize(1);
        return found.get(0);
    }

    private static Ownership ownedBy(String address) {
        return new Ownership() {
            @Override
            public String self() {
                return "sender";
            }

            @Override
            public Route route(String model, String version) {
                return new Route.Remote("owner", address, 7);
            }

            @Override
            public CompletableFuture<Boolean> accepts(String model, String version, Claim claim) {
                return CompletableFuture.completedFuture(false);
            }
        };
    }
}
