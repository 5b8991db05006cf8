package io.servegate.sim;

import java.util.Arrays;

/**
 * The simulator's pending events, earliest first, ties in scheduling order: a binary heap on an
 * array, since it is the hottest structure of a run (a few operations per simulated query).
 */
final class EventQueue {

    private Event[] heap = new Event[1024];
    private int size;
    private long nextSeq;

    /** Schedules {@code e} at {@code at}; an event may be scheduled again once it has fired. */
    void add(Event e, long at) {
        e.at = at;
        e.seq = nextSeq++;
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Event p = heap[parent];
            if (!before(e, p)) {
                break;
            }
            heap[i] = p;
            i = parent;
        }
        heap[i] = e;
    }

    /** Removes and returns the earliest event, or null. */
    Event poll() {
        if (size == 0) {
            return null;
        }
        Event top = heap[0];
        Event last = heap[--size];
        heap[size] = null;
        if (size > 0) {
            int i = 0;
            int half = size >>> 1;
            while (i < half) {
                int child = 2 * i + 1;
                int right = child + 1;
                if (right < size && before(heap[right], heap[child])) {
                    child = right;
                }
                if (!before(heap[child], last)) {
                    break;
                }
                heap[i] = heap[child];
                i = child;
            }
            heap[i] = last;
        }
        return top;
    }

    boolean isEmpty() {
        return size == 0;
    }

    private static boolean before(Event a, Event b) {
        return a.at < b.at || (a.at == b.at && a.seq < b.seq);
    }
}
