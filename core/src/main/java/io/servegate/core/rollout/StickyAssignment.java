package io.servegate.core.rollout;

import java.nio.charset.StandardCharsets;

/**
 * Which users a rollout's candidate serves: a user's point in {@code [0, 1)} is a 64-bit hash of
 * the rollout's id and the user's uid, and the candidate serves the user while the point is below
 * the current share. As the share grows a user on the candidate stays on it; a new rollout
 * (another id) draws other users. The hash is FNV-1a over the UTF-8 bytes followed by the
 * SplitMix64 finalizer, so every gateway and the simulator agree on it.
 */
public final class StickyAssignment {

    private StickyAssignment() {
    }

    /** @return whether the user {@code uid} is on the candidate at {@code share} */
    public static boolean onCandidate(String rolloutId, String uid, double share) {
        return share >= 1 || (share > 0 && point(rolloutId, uid) < share);
    }

    /** @return the user's point in {@code [0, 1)} */
    public static double point(String rolloutId, String uid) {
        long h = 0xcbf29ce484222325L;
        for (byte b : (rolloutId + '\u0000' + uid).getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
        h = (h ^ (h >>> 27)) * 0x94d049bb133111ebL;
        h ^= h >>> 31;
        return (h >>> 11) * 0x1.0p-53;
    }
}
