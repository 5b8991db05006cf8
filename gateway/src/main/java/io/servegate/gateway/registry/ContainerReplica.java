package io.servegate.gateway.registry;

/**
 * One running model container that serves a model version.
 *
 * @param id           unique replica id; adding a replica with an existing id replaces it
 * @param modelName    the model it serves
 * @param modelVersion the version it serves
 * @param address      where its RPC endpoint listens, {@code host:port}
 */
public record ContainerReplica(String id, String modelName, String modelVersion, String address) {
}
