package io.servegate.gateway.fleet;

import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.servegate.core.fleet.Assignment;
import io.servegate.core.fleet.OwnershipChange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The fleet's membership and version ownership in the Redis that holds the registry: heartbeats
 * that renew a member's lease, and ownership plans applied all or nothing with fencing (see
 * {@link FleetScripts}). Blocking calls: the caller runs them off the request path, on the
 * member's own heartbeat thread.
 */
public final class RedisFleetStore implements AutoCloseable {

    /** How {@link #apply} ended. */
    public enum ApplyResult {
        /** Written. */
        OK,
        /** The planning member's lease had run out: it is fenced and must rejoin. */
        EXPIRED,
        /** Members or owners changed since the plan was made: plan again from a fresh read. */
        STALE,
        /** A step no longer fits what is stored (see {@link FleetScripts#APPLY}). */
        CONFLICT
    }

    /** How long a released version's backlog stays in Redis if no member takes it: far longer than any batch. */
    static final Duration BACKLOG_KEPT = Duration.ofSeconds(10);

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final String[] keys;
    private final String profilesKey;
    private final String backlogKey;
    private final String heartbeatSha;
    private final String applySha;

    private RedisFleetStore(RedisClient client, String keyPrefix) {
        this.client = client;
        this.connection = client.connect(StringCodec.UTF8);
        this.redis = connection.sync();
        String p = keyPrefix + ":fleet:";
        this.keys = new String[] {p + "members", p + "addresses", p + "rates", p + "owners", p + "epoch",
            p + "generation", p + "draining"};
        this.profilesKey = p + "profiles";
        this.backlogKey = p + "backlog";
        this.heartbeatSha = redis.digest(FleetScripts.HEARTBEAT);
        this.applySha = redis.digest(FleetScripts.APPLY);
    }

    /** A store on {@code client}, which it shuts down on {@link #close()}; keys start with {@code keyPrefix:fleet:}. */
    public static RedisFleetStore connect(RedisClient client, String keyPrefix) {
        try {
            return new RedisFleetStore(client, keyPrefix);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    /** What a heartbeat says of its member besides renewing its lease. */
    public enum Beat {
        /** Starts the membership. */
        JOIN,
        /** Renews it. */
        BEAT,
        /** Renews it and marks the member as shutting down: it is given nothing and hands off what it owns. */
        DRAIN
    }

    /**
     * Renews {@code member}'s lease (or starts it, {@link Beat#JOIN}), releases the versions it
     * has stopped scheduling, says it is ready for the versions in {@code ready} that are being
     * handed to it, and reads the fleet; empty when a member that is not joining has no live lease
     * any more.
     */
    public Optional<FleetState> heartbeat(String member, String address, Duration lease,
            Map<String, Double> rates, Beat beat, Collection<String> releases, Collection<String> ready) {
        List<String> argv = new ArrayList<>(List.of(member, address, Long.toString(lease.toMillis()),
                encodeRates(rates), beat.name(), Integer.toString(releases.size())));
        argv.addAll(releases);
        argv.addAll(ready);
        List<Object> reply = run(FleetScripts.HEARTBEAT, heartbeatSha, argv);
        if ("EXPIRED".equals(reply.get(0))) {
            return Optional.empty();
        }
        Map<String, String> addresses = pairs(reply.get(4));
        Map<String, Map<String, Double>> rateMap = new TreeMap<>();
        pairs(reply.get(5)).forEach((m, r) -> rateMap.put(m, decodeRates(r)));
        Map<String, Assignment> owners = new TreeMap<>();
        pairs(reply.get(6)).forEach((v, a) -> owners.put(v, decodeAssignment(a)));
        return Optional.of(new FleetState(Long.parseLong((String) reply.get(2)), names(reply.get(3)), addresses,
                rateMap, owners, names(reply.get(7))));
    }

    @SuppressWarnings("unchecked")
    private static TreeSet<String> names(Object list) {
        return ((List<Object>) list).stream().map(String.class::cast).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Applies {@code changes}, planned by {@code member} from the state of {@code generation}, all or nothing. */
    public ApplyResult apply(String member, long generation, List<OwnershipChange> changes) {
        List<String> argv = new ArrayList<>(List.of(member, Long.toString(generation)));
        for (OwnershipChange c : changes) {
            argv.add(c.version());
            argv.add(c.kind().name());
            argv.add(c.target());
        }
        return ApplyResult.valueOf((String) run(FleetScripts.APPLY, applySha, argv).get(0));
    }

    /** Stores what the member that schedules each version measured ({@code model:version} → encoded profiles). */
    public void publishProfiles(Map<String, String> profiles) {
        if (!profiles.isEmpty()) {
            redis.hset(profilesKey, profiles);
        }
    }

    /**
     * Removes the profiles published for versions other than {@code existing} (those that left the
     * registry); how many it removed.
     */
    public long forgetProfilesExcept(Set<String> existing) {
        String[] gone = redis.hkeys(profilesKey).stream().filter(v -> !existing.contains(v)).toArray(String[]::new);
        return gone.length == 0 ? 0 : redis.hdel(profilesKey, gone);
    }

    /** The profiles published for {@code versions}, by version; versions with none are left out. */
    public Map<String, String> profiles(Collection<String> versions) {
        Map<String, String> out = new HashMap<>();
        if (!versions.isEmpty()) {
            redis.hmget(profilesKey, versions.toArray(String[]::new))
                    .forEach(kv -> kv.ifHasValue(value -> out.put(kv.getKey(), value)));
        }
        return out;
    }

    /**
     * Leaves, for each version a member is releasing, how long each of its replicas still runs
     * that member's batches ({@code model:version} → replica id → nanoseconds from now), for the
     * member that takes the version over ({@link #takeBacklog}). Stamped with Redis's clock, not
     * the member's; kept {@link #BACKLOG_KEPT} at most.
     */
    public void publishBacklog(Map<String, Map<String, Long>> byVersion) {
        Map<String, String> fields = new HashMap<>();
        String at = Long.toString(redisMicros());
        byVersion.forEach((version, replicas) -> {
            StringBuilder b = new StringBuilder(at);
            replicas.forEach((replica, nanos) -> b.append('\n').append(nanos).append(' ').append(replica));
            fields.put(version, b.toString());
        });
        if (!fields.isEmpty()) {
            redis.hset(backlogKey, fields);
            redis.pexpire(backlogKey, BACKLOG_KEPT.toMillis());
        }
    }

    /**
     * What {@link #publishBacklog} left for {@code versions}, less the time since by Redis's clock
     * (replicas whose backlog has run out are left out), removing it: version → replica id →
     * nanoseconds from now.
     */
    public Map<String, Map<String, Long>> takeBacklog(Collection<String> versions) {
        Map<String, Map<String, Long>> out = new HashMap<>();
        if (versions.isEmpty()) {
            return out;
        }
        String[] fields = versions.toArray(String[]::new);
        List<KeyValue<String, String>> stored = redis.hmget(backlogKey, fields);
        long now = redisMicros();
        for (var kv : stored) {
            if (!kv.hasValue()) {
                continue;
            }
            String[] lines = kv.getValue().split("\n");
            long elapsedNanos = Math.max(0, now - Long.parseLong(lines[0])) * 1_000;
            Map<String, Long> replicas = new HashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int space = lines[i].indexOf(' ');
                long left = Long.parseLong(lines[i].substring(0, space)) - elapsedNanos;
                if (left > 0) {
                    replicas.put(lines[i].substring(space + 1), left);
                }
            }
            out.put(kv.getKey(), replicas);
        }
        redis.hdel(backlogKey, fields);
        return out;
    }

    private long redisMicros() {
        List<String> t = redis.time();
        return Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1));
    }

    private List<Object> run(String script, String sha, List<String> argv) {
        String[] args = argv.toArray(String[]::new);
        try {
            return redis.evalsha(sha, ScriptOutputType.MULTI, keys, args);
        } catch (RedisNoScriptException e) {
            return redis.eval(script, ScriptOutputType.MULTI, keys, args);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> pairs(Object flat) {
        List<Object> list = (List<Object>) flat;
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i + 1 < list.size(); i += 2) {
            map.put((String) list.get(i), (String) list.get(i + 1));
        }
        return map;
    }

    static Assignment decodeAssignment(String stored) {
        String[] parts = stored.split(" ", -1);
        return new Assignment(parts[0], Long.parseLong(parts[1]), parts.length > 2 ? parts[2] : "",
                parts.length > 3 && parts[3].equals("1"));
    }

    /** {@code model:version=rate} pairs separated by spaces (names hold neither character). */
    static String encodeRates(Map<String, Double> rates) {
        return rates.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "));
    }

    static Map<String, Double> decodeRates(String encoded) {
        Map<String, Double> rates = new TreeMap<>();
        for (String pair : encoded.split(" ")) {
            int eq = pair.lastIndexOf('=');
            if (eq > 0) {
                rates.put(pair.substring(0, eq), Double.parseDouble(pair.substring(eq + 1)));
            }
        }
        return rates;
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
