package io.servegate.core.scheduling;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What one replica's profile estimates: a batch's service time at some sizes (1, 2, 4, … and the
 * largest), and the transport overhead beside it. A gateway that schedules a version publishes its
 * replicas' estimates so that another one can seed its profiles with them instead of measuring.
 *
 * @param serviceNanos batch size → estimated service time
 */
public record ReplicaEstimate(SortedMap<Integer, Long> serviceNanos, long overheadNanos) {

    public ReplicaEstimate {
        serviceNanos = Collections.unmodifiableSortedMap(new TreeMap<>(serviceNanos));
    }
}
