package io.servegate.gateway.containers.docker;

import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code servegate.containers.docker.*}: the {@code docker} manager's own settings, besides the
 * shared {@code servegate.containers.*} ones (backoff is Docker's own).
 *
 * @param host          the engine's API: {@code unix:///var/run/docker.sock} or {@code tcp://host:2375}
 * @param network       {@code host} (a free port is passed as PORT) or a Docker network; its port is then
 *                      published on 127.0.0.1
 * @param containerPort the port a container listens on in a non-host network
 * @param maxRestarts   Docker's retry limit for {@code on-failure}; 0 = unlimited
 * @param owner         the {@code servegate.owner} label: containers a gateway with this owner left behind
 *                      are removed at its start
 */
public record DockerProperties(
        @DefaultValue("unix:///var/run/docker.sock") String host,
        @DefaultValue("host") String network,
        @DefaultValue("8001") int containerPort,
        @DefaultValue("0") int maxRestarts,
        @DefaultValue("servegate") String owner) {
}
