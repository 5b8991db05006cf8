package io.servegate.gateway.containers.docker;

import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.ContainerManagerException.Kind;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * The loopback ports a manager's containers are published on: each port is free when reserved
 * and is never handed to a second replica while the first holds it, even before its container
 * has bound it. Thread-safe.
 */
final class PortReservations {

    private static final int ATTEMPTS = 20;

    private final Set<Integer> inUse = new HashSet<>();
    private final IntSupplier freePorts;

    PortReservations() {
        this(PortReservations::freeLoopbackPort);
    }

    /** @param freePorts where candidate ports come from (a test hands out one it holds) */
    PortReservations(IntSupplier freePorts) {
        this.freePorts = freePorts;
    }

    /** @return a free loopback port, now held until {@link #release} */
    int reserve() {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = freePorts.getAsInt();
            synchronized (inUse) {
                if (inUse.add(port)) {
                    return port;
                }
            }
        }
        throw new ContainerManagerException(Kind.PLATFORM, "no free port");
    }

    /** A loopback port free now (the kernel's pick). */
    static int freeLoopbackPort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new ContainerManagerException(Kind.PLATFORM, "no free port: " + e.getMessage(), e);
        }
    }

    void release(int port) {
        synchronized (inUse) {
            inUse.remove(port);
        }
    }
}
