package io.servegate.gateway.access;

import io.servegate.gateway.registry.RateLimit;

/**
 * A query key as stored: its id and the SHA-256 digest of the key, never the key itself.
 *
 * @param id            the key's public id (in metrics, logs and the admin API)
 * @param digest        lower-case hex SHA-256 of the whole key text
 * @param rateLimit     the key's own quota, within the app's; null for none
 * @param createdMillis when it was created (epoch milliseconds)
 */
public record QueryKey(String id, String digest, RateLimit rateLimit, long createdMillis) {
}
