package io.servegate.gateway.fleet;

/** Where a query for one model version is scheduled, as this gateway sees the fleet now. */
public sealed interface Route {

    /** This gateway owns the version and schedules the query itself. */
    record Local(long epoch) implements Route {
    }

    /**
     * Another member owns the version (or is taking it over from this one): the query is forwarded
     * to {@code address}.
     *
     * @param fromOwner this gateway is the owner that released the version to {@code member}, which
     *     accepts the query before its own heartbeat has told it that it owns the version
     */
    record Remote(String member, String address, long epoch, boolean fromOwner) implements Route {
    }

    /** No live gateway owns the version as far as this one knows; the query gets its default. */
    record Unowned(String reason) implements Route {
    }
}
