package io.servegate.gateway.fleet;

/** Where a query for one model version is scheduled, as this gateway sees the fleet now. */
public sealed interface Route {

    /** This gateway owns the version and schedules the query itself. */
    record Local(long epoch) implements Route {
    }

    /**
     * Another member owns the version (or is taking it over from this one) at {@code epoch}, as
     * this gateway sees the fleet: the query is forwarded to {@code address}.
     */
    record Remote(String member, String address, long epoch) implements Route {
    }

    /** No live gateway owns the version as far as this one knows; the query gets its default. */
    record Unowned(String reason) implements Route {
    }
}
