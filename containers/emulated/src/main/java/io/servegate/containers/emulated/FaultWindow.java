package io.servegate.containers.emulated;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When an injected fault is active: from {@code afterMs} after the container started, for
 * {@code forMs} (negative = until the end), and, if {@code trigger} is set, only while that file
 * exists (so that a test can switch the fault on and off exactly); each batch is hit with
 * {@code probability}.
 */
record FaultWindow(long startNanos, long afterMs, long forMs, double probability, Path trigger) {

    FaultWindow {
        if (afterMs < 0 || !(probability >= 0 && probability <= 1)) {
            throw new IllegalArgumentException("fault window needs after >= 0 and probability in [0, 1], got after="
                    + afterMs + " probability=" + probability);
        }
    }

    /** Whether the current batch is hit. */
    boolean hits() {
        long sinceMs = (System.nanoTime() - startNanos) / 1_000_000;
        boolean open = sinceMs >= afterMs && (forMs < 0 || sinceMs < afterMs + forMs)
                && (trigger == null || Files.exists(trigger));
        return open && (probability >= 1 || ThreadLocalRandom.current().nextDouble() < probability);
    }
}
