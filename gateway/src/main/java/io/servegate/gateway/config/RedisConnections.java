package io.servegate.gateway.config;

import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.io.File;

/** Turns a Redis URI plus {@code servegate.redis.*} into what Lettuce connects with. */
final class RedisConnections {

    private RedisConnections() {
    }

    /** The URI with the configured credentials and TLS switches applied on top of its own. */
    static RedisURI uri(String uri, ServegateProperties.Redis redis) {
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
    static SslOptions ssl(ServegateProperties.Redis redis) {
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
