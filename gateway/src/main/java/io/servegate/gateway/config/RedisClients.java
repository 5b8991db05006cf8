package io.servegate.gateway.config;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.TimeoutOptions;
import java.io.File;
import java.time.Duration;

/**
 * The one way the gateway makes Lettuce clients, for the Redis registry and the selection state
 * store alike: the URI with {@code servegate.redis.*} credentials and TLS applied, and the client
 * options those stores work best with. Commands are rejected at once while disconnected (so a
 * write fails fast while Redis is down), the client reconnects (re-subscribing) on its own, and
 * connects and commands time out after {@link #COMMAND_TIMEOUT}. The caller shuts the client down,
 * or hands it to a store's {@code connect}, which does.
 */
public final class RedisClients {

    /** How long a connect or a command may take before the store counts as unreachable. */
    public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

    private RedisClients() {
    }

    /** A client for {@code redisUri} (e.g. {@code redis://127.0.0.1:6379}) as the URI alone says. */
    public static RedisClient create(String redisUri) {
        return create(RedisURI.create(redisUri), null);
    }

    /** A client for {@code redisUri} with the configured credentials and TLS settings applied on top of its own. */
    public static RedisClient create(String redisUri, ServegateProperties.Redis settings) {
        return create(uri(redisUri, settings), ssl(settings));
    }

    private static RedisClient create(RedisURI redisUri, SslOptions ssl) {
        RedisClient client = RedisClient.create(redisUri);
        ClientOptions.Builder options = ClientOptions.builder();
        if (ssl != null) {
            options.sslOptions(ssl);
        }
        client.setOptions(options
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(SocketOptions.builder().connectTimeout(COMMAND_TIMEOUT).build())
                .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
                .build());
        return client;
    }

    private static RedisURI uri(String uri, ServegateProperties.Redis redis) {
        RedisURI u = RedisURI.create(uri);
        if (!redis.password().isEmpty()) {
            if (redis.username().isEmpty()) {
                u.setAuthentication(redis.password().toCharArray());
            } else {
                u.setAuthentication(redis.username(), redis.password().toCharArray());
            }
        } else if (!redis.username().isEmpty()) {
            throw new IllegalStateException("servegate.redis.username is set but servegate.redis.password is not");
        }
        if (redis.tls()) {
            u.setSsl(true);
        }
        if (!redis.verifyPeer()) {
            u.setVerifyPeer(SslVerifyMode.NONE);
        }
        return u;
    }

    /** Trust material from {@code ca-file} or {@code trust-store}; null = the JVM's defaults. */
    private static SslOptions ssl(ServegateProperties.Redis redis) {
        if (!redis.caFile().isEmpty() && !redis.trustStore().isEmpty()) {
            throw new IllegalStateException("set servegate.redis.ca-file or servegate.redis.trust-store, not both");
        }
        if (!redis.caFile().isEmpty()) {
            return SslOptions.builder().jdkSslProvider().trustManager(readable(redis.caFile(), "ca-file")).build();
        }
        if (!redis.trustStore().isEmpty()) {
            return SslOptions.builder().jdkSslProvider()
                    .truststore(readable(redis.trustStore(), "trust-store"), redis.trustStorePassword()).build();
        }
        return null;
    }

    private static File readable(String path, String property) {
        File f = new File(path);
        if (!f.canRead()) {
            throw new IllegalStateException("servegate.redis." + property + " " + path + " is not a readable file");
        }
        return f;
    }
}
