package io.servegate.gateway.connections;

/** Why the gateway closed a connection it had accepted, or a client left one mid-request. */
public enum DropReason {
    /** The request line and headers did not arrive within the header timeout. */
    HEADER_TIMEOUT("header-timeout", true),
    /** A request body paused longer than the read timeout. */
    READ_TIMEOUT("read-timeout", true),
    /** A request body did not arrive whole within the request timeout. */
    REQUEST_TIMEOUT("request-timeout", true),
    /** A kept-alive connection had no next request within the idle timeout: routine, so not logged. */
    IDLE_TIMEOUT("idle-timeout", false),
    /** A gRPC connection did not finish its HTTP/2 handshake in time. */
    HANDSHAKE_TIMEOUT("handshake-timeout", true),
    /** The port already held its most connections. */
    LIMIT("limit", true),
    /** The client (remote address) already held its share of the port's connections. */
    PER_CLIENT_LIMIT("per-client-limit", true),
    /** All ports together already held the connection budget the descriptor limit allows. */
    BUDGET("budget", true),
    /** Idle, and closed to make room for a client holding fewer connections while the port or budget was full. */
    EVICTED("evicted", true),
    /** The client closed the connection with its request half sent. */
    ABANDONED("abandoned", true);

    private final String tag;
    private final boolean logged;

    DropReason(String tag, boolean logged) {
        this.tag = tag;
        this.logged = logged;
    }

    /** The metric tag and log word. */
    public String tag() {
        return tag;
    }

    /** Whether the log's summaries mention it (the metric counts every reason). */
    boolean logged() {
        return logged;
    }
}
