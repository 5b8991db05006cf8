package io.servegate.gateway.fleet;

import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.BearerAuth;

/**
 * The secret the gateways of a fleet share ({@code servegate.fleet.secret}): every forwarded call
 * carries it as {@code authorization: Bearer <secret>} metadata, and the fleet port refuses a call
 * without it, or with another, as {@code UNAUTHENTICATED} before reading its message. Compared in
 * constant time ({@link BearerAuth}). An empty secret (allowed only with
 * {@code servegate.fleet.require-secret=false}) neither sends nor checks anything.
 */
public final class FleetSecret {

    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final String secret;
    private final BearerAuth auth;

    private FleetSecret(String secret) {
        this.secret = secret;
        this.auth = BearerAuth.of(secret, "servegate-fleet");
    }

    /** @param secret the shared secret; empty = the hop is open to whoever reaches the port */
    public static FleetSecret of(String secret) {
        return new FleetSecret(secret.strip());
    }

    public boolean enabled() {
        return auth.enabled();
    }

    /** Adds the secret to every call of a channel it intercepts; nothing when there is none. */
    ClientInterceptor sender() {
        Metadata headers = new Metadata();
        if (enabled()) {
            headers.put(AUTHORIZATION, "Bearer " + secret);
        }
        return MetadataUtils.newAttachHeadersInterceptor(headers);
    }

    /**
     * Refuses calls that do not carry the secret, counting each in
     * {@code servegate.fleet.hop.refused{reason=unauthenticated}}.
     */
    ServerInterceptor checker(MeterRegistry meters) {
        Counter refused = Counter.builder("servegate.fleet.hop.refused").tag("reason", "unauthenticated")
                .description("Calls to the fleet port refused for a missing or wrong fleet secret").register(meters);
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                    ServerCallHandler<Q, A> next) {
                String problem = auth.problem(headers.get(AUTHORIZATION));
                if (problem == null) {
                    return next.startCall(call, headers);
                }
                refused.increment();
                call.close(Status.UNAUTHENTICATED.withDescription("the fleet secret is " + problem
                        + " (servegate.fleet.secret)"), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
        };
    }
}
