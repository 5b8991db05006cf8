package io.servegate.sim;

/**
 * Something that happens at a virtual time. Events at the same time fire in the order they were
 * scheduled ({@link EventQueue} numbers them), which keeps a run deterministic for its seed.
 */
abstract class Event {

    long at;
    long seq;

    /** Carries the event out; {@code now} equals {@link #at}. */
    abstract void fire(long now);
}
