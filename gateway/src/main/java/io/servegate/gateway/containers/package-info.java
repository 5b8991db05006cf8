/**
 * Container management: the {@link io.servegate.gateway.containers.ContainerManager} SPI and its
 * platforms. Depends on the registry (to register ready replicas) and the SDK's client (for the
 * readiness check), never on the HTTP layer.
 */
package io.servegate.gateway.containers;
