/**
 * Container management: the {@link io.servegate.gateway.containers.ContainerManager} SPI, the
 * built-in {@code process} and {@code external} managers, and the
 * {@link io.servegate.gateway.containers.ContainerManagerProvider} through which the {@code docker}
 * and {@code kubernetes} managers join from their own modules. Depends on the registry (to
 * register ready replicas) and the OIP client (for the readiness check), never on the HTTP layer.
 */
package io.servegate.gateway.containers;
