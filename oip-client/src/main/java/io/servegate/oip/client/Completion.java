package io.servegate.oip.client;

/** Where a {@link ContainerClient}'s futures complete, and so where what a caller chains onto them runs. */
public enum Completion {
    /**
     * On gRPC's shared executor, one thread hop after the answer was read: what a caller chains may
     * block (a probe that closes its client when done, a command-line tool).
     */
    EXECUTOR,
    /**
     * On the channel's Netty event loop that read the answer, without a hop: for the query path,
     * where each hop is a thread wake-up per batch. What a caller chains must never block, and must
     * not close the client (closing waits for that very loop).
     */
    EVENT_LOOP
}
