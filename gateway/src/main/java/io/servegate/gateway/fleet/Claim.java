package io.servegate.gateway.fleet;

/**
 * What the sender of a forwarded query knew: who it is, whether it is the owner that released
 * the version to the receiver, and which member it believed owns the version at which epoch.
 */
public record Claim(String from, boolean fromOwner, String owner, long epoch) {
}
