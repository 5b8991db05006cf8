package io.servegate.gateway.containers.docker;

import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.ContainerManagerException.Kind;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * The loopback ports a manager's containers are published on: each port is free when reserved
 * and is never handed to a second replica while the first holds it, even before its container
 * has bound it. Thread-safe.
 */
final class PortReservations {

    private static final int ATTEMPTS = 20;

    private final Set<Integer> inUse = new HashSet<>();

    /** @return a free loopback port, now held until {@link #release} */
    int reserve() {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                synchronized (inUse) {
                    if (inUse.add(s.getLocalPort())) {
                        return s.getLocalPort();
                    }
                }
            } catch (IOException e) {
                throw new ContainerManagerException(Kind.PLATFORM, "no free port: " + e.getMessage(), e);
            }
        }
        throw new ContainerManagerException(Kind.PLATFORM, "no free port");
    }

    void release(int port) {
        synchronized (inUse) {
            inUse.remove(port);
        }
    }
}
