package io.servegate.gateway.fleet;

/**
 * What the sender of a forwarded query says: who it is, and which member it believed owns the
 * version at which epoch. A receiver takes none of it on trust: a claim that names the receiver
 * as the owner at an epoch its own view has not reached only makes it read the fleet again.
 */
public record Claim(String from, String owner, long epoch) {
}
