package io.servegate.gateway.selection;

import io.servegate.core.selection.Versioned;
import io.servegate.core.selection.WeightedPolicy;
import io.servegate.core.selection.WeightedState;
import io.servegate.core.selection.WeightedStep;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@link SelectionStateStore} in Redis, shared by every gateway instance that uses the same
 * server and key prefix (Clipper keeps its per-context selection state in Redis, §5.3).
 *
 * <h2>Layout</h2>
 * One HASH per application and context, {@code {prefix}:sel:{app}:{context}}, with fields
 * {@code ver} (the version, a decimal integer) and {@code state} (the encoded state). The app and
 * context are percent-encoded ({@code :}, {@code @}, {@code %} and other non-alphanumerics are
 * escaped); the application-wide state's context is the reserved {@code @}.
 *
 * <p>Per-context states are bounded per application ({@link StateBounds}): a sorted set per
 * application, {@code {prefix}:sel-lru:{app}}, holds its contexts scored by the time of their last
 * write (Redis's {@code TIME}, so gateways' clocks do not matter). Every write of a context's
 * state, by any gateway, adds it there, drops the members older than the TTL (whose states have
 * expired) and, beyond {@code maxStatesPerApp}, deletes the least recently written states with
 * their members, in the same script as the write: the bound holds across a fleet sharing Redis,
 * at a few O(log n) commands a write. The set expires with the TTL too. The application-wide
 * state is in no set and never evicted.
 *
 * <h2>Operations</h2>
 * {@link #get} is one {@code HMGET}. {@link #compareAndSet} is one Lua script (EVALSHA, falling
 * back to EVAL when the server's script cache was flushed) that compares the version, writes the
 * state, increments the version and sets the TTL atomically. With a TTL, every successful write
 * resets it ({@code PEXPIRE}), so an idle context disappears {@code ttl} after its last feedback;
 * without one, keys are made persistent ({@code PERSIST}).
 *
 * <p>{@link #observe} is one Lua script too, which applies the {@link WeightedStep} to the stored
 * state itself (the same arithmetic as {@link WeightedStep#applyTo}, on the same doubles): no
 * read before, no retry under contention, at most one round trip per feedback; observations of
 * one state that arrive while its script runs go together, in order, in the next call. When the stored state is
 * about other models than the app's linked ones (or is not the policy's), the script changes
 * nothing and the update falls back to the optimistic one in Java, which relinks (or fails to
 * decode).
 *
 * <p>Command timeouts and reconnection follow the {@link RedisClient}'s options (see
 * {@code config.RedisClients}); failures surface as Lettuce exceptions in the {@link Mono}.
 * The client belongs to the caller: {@link #close()} closes only this store's connection.
 */
public final class RedisSelectionStateStore implements SelectionStateStore {

    /** The default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "servegate";

    /**
     * After a write: KEYS[2] (when present) = the app's sorted set of contexts; the last three
     * ARGV = the cap, this context's member, the prefix of the app's state keys; TTL in ms ("0" =
     * none). Returns how many states were evicted.
     */
    static final String TOUCH_FUNCTION = """
            local function touch(ttl)
              if not KEYS[2] then return 0 end
              local n = #ARGV
              local cap, member, states = tonumber(ARGV[n - 2]), ARGV[n - 1], ARGV[n]
              local t = redis.call('TIME')
              local now = t[1] * 1000 + math.floor(t[2] / 1000)
              if ttl ~= '0' then
                redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('(%.0f', now - tonumber(ttl)))
              end
              redis.call('ZADD', KEYS[2], string.format('%.0f', now), member)
              local over, evicted = redis.call('ZCARD', KEYS[2]) - cap, 0
              if over > 0 then
                -- the oldest, skipping this write's own context (several writes may share a ms)
                for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, over)) do
                  if evicted < over and m ~= member then
                    redis.call('ZREM', KEYS[2], m)
                    redis.call('DEL', states .. m)
                    evicted = evicted + 1
                  end
                end
              end
              if ttl ~= '0' then
                redis.call('PEXPIRE', KEYS[2], ttl)
              else
                redis.call('PERSIST', KEYS[2])
              end
              return evicted
            end
            """;

    /**
     * KEYS[1] = state key, KEYS[2] = the app's contexts ({@link #TOUCH_FUNCTION}; absent for the
     * app-wide state); ARGV = expected version ("0" = absent), new state, initial version for a
     * new key, TTL in ms ("0" = none), then the touch arguments. Returns 0 when nothing was
     * written, else 1 + the number of states evicted. Versions are compared as strings: both
     * sides are canonical decimal integers, and Lua numbers (doubles) would lose precision past
     * 2^53.
     */
    static final String CAS_SCRIPT = TOUCH_FUNCTION + """
            local ver = redis.call('HGET', KEYS[1], 'ver')
            if ver then
              if ver ~= ARGV[1] then return 0 end
              redis.call('HSET', KEYS[1], 'state', ARGV[2])
              redis.call('HINCRBY', KEYS[1], 'ver', 1)
            else
              if ARGV[1] ~= '0' then return 0 end
              redis.call('HSET', KEYS[1], 'ver', ARGV[3], 'state', ARGV[2])
            end
            if ARGV[4] ~= '0' then
              redis.call('PEXPIRE', KEYS[1], ARGV[4])
            else
              redis.call('PERSIST', KEYS[1])
            end
            return 1 + touch(ARGV[4])
            """;

    /**
     * KEYS as {@link #CAS_SCRIPT}'s; ARGV = TTL in ms ("0" = none), initial version for a new
     * key, the smallest log weight, the policy's state header (schema version and tag bytes,
     * hex), the number K of linked models, their names (UTF-8, which for these names is their
     * modified UTF-8), the number of steps, then per step one log-weight decrement per model in
     * link order (hex floats, exact), then the touch arguments. Returns the number of states
     * evicted (decimal) followed by the state after each step, in order (the last one is the
     * state written), or an empty array (nothing written) when the stored state has another
     * header or model list.
     */
    static final String OBSERVE_SCRIPT = TOUCH_FUNCTION + """
            -- WeightedStateCodec v1: schema byte, tag byte, i8 observations, i4 n,
            -- n times (u16 length, modified UTF-8 name, double log weight), big-endian
            local function parse(s)
              local obs, n, pos = struct.unpack('>i8i4', s, 3)
              local names, lw = {}, {}
              for i = 1, n do
                local len = struct.unpack('>H', s, pos)
                names[i] = string.sub(s, pos, pos + 1 + len)
                lw[i], pos = struct.unpack('>d', s, pos + 2 + len)
              end
              return string.sub(s, 1, 2), obs, names, lw, pos
            end
            local head = string.char(tonumber(string.sub(ARGV[4], 1, 2), 16), tonumber(string.sub(ARGV[4], 3, 4), 16))
            local k = tonumber(ARGV[5])
            local names, lw, obs = {}, {}, 0
            for i = 1, k do
              names[i] = struct.pack('>H', #ARGV[5 + i]) .. ARGV[5 + i]
              lw[i] = 0
            end
            local ver, stored = unpack(redis.call('HMGET', KEYS[1], 'ver', 'state'))
            if ver and stored then
              local h, o, n, w, pos = parse(stored)
              if h ~= head or #n ~= k or pos ~= #stored + 1 then return {} end
              for i = 1, k do
                if n[i] ~= names[i] then return {} end
              end
              obs, lw = o, w
            elseif ver or stored then
              return {}
            end
            -- WeightedStep.applyTo: subtract, normalize (largest 0, none below the floor), count
            local floor = tonumber(ARGV[3])
            local steps, states = 6 + k, {}
            for s = 0, tonumber(ARGV[steps]) - 1 do
              local max = -math.huge
              for i = 1, k do
                lw[i] = lw[i] - tonumber(ARGV[steps + s * k + i])
                if lw[i] > max then max = lw[i] end
              end
              for i = 1, k do
                lw[i] = math.max(floor, lw[i] - max)
              end
              obs = obs + 1
              local out = {head, struct.pack('>i8i4', obs, k)}
              for i = 1, k do
                out[#out + 1] = names[i]
                out[#out + 1] = struct.pack('>d', lw[i])
              end
              states[#states + 1] = table.concat(out)
            end
            local state = states[#states]
            if ver then
              redis.call('HSET', KEYS[1], 'state', state)
              redis.call('HINCRBY', KEYS[1], 'ver', 1)
            else
              redis.call('HSET', KEYS[1], 'ver', ARGV[2], 'state', state)
            end
            if ARGV[1] ~= '0' then
              redis.call('PEXPIRE', KEYS[1], ARGV[1])
            else
              redis.call('PERSIST', KEYS[1])
            end
            table.insert(states, 1, tostring(touch(ARGV[1])))
            return states
            """;

    private static final byte[] FLOOR = bytes(Double.toHexString(WeightedState.MIN_LOG_WEIGHT));

    private final String keyPrefix;
    private final String lruPrefix;
    private final byte[] ttlMillis;
    private final byte[] maxStatesPerApp;
    private final LongAdder evictions = new LongAdder();
    private final StatefulRedisConnection<String, byte[]> connection;
    /** Shut down on close when this store created it ({@link #connect}); a caller's client is the caller's. */
    private final RedisClient ownedClient;
    private final RedisReactiveCommands<String, byte[]> redis;
    private final String casSha;
    private final String observeSha;
    /** At most 256 steps a script call: a few ms of Redis time at most, however many clients wait. */
    private final ObserveCoalescer<StateWrite> coalescer = new ObserveCoalescer<>(256);

    /**
     * Opens a connection (blocking; meant for startup).
     *
     * @param client the Lettuce client (not shut down by {@link #close()})
     * @param prefix key prefix, e.g. {@value #DEFAULT_KEY_PREFIX}; not blank
     * @param bounds how many per-context states an app keeps, and for how long
     * @throws IllegalArgumentException if {@code prefix} is blank
     * @throws io.lettuce.core.RedisException if Redis cannot be reached
     */
    public RedisSelectionStateStore(RedisClient client, String prefix, StateBounds bounds) {
        this(client, prefix, bounds, false);
    }

    private RedisSelectionStateStore(RedisClient client, String prefix, StateBounds bounds, boolean ownsClient) {
        Objects.requireNonNull(client, "client");
        if (prefix == null || prefix.isBlank()) {
            throw new IllegalArgumentException("prefix must not be blank");
        }
        this.keyPrefix = prefix + ":sel:";
        this.lruPrefix = prefix + ":sel-lru:";
        this.ttlMillis = bytes(bounds.ttl() == null ? "0" : Long.toString(bounds.ttl().toMillis()));
        this.maxStatesPerApp = bytes(Long.toString(bounds.maxStatesPerApp()));
        this.connection = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
        this.redis = connection.reactive();
        this.casSha = redis.digest(CAS_SCRIPT);
        this.observeSha = redis.digest(OBSERVE_SCRIPT);
        this.ownedClient = ownsClient ? client : null;
    }

    /**
     * The Redis key of a state.
     *
     * @param app     the application, not blank
     * @param context the context; {@code null} or empty for the application-wide state
     * @return {@code {prefix}:sel:{app}:{context}}, escaped
     */
    public String key(String app, String context) {
        return keyPrefix + StateKeys.key(app, context);
    }

    /** KEYS: the state's key, and for a per-context state its app's sorted set of contexts. */
    private String[] keys(String app, String context) {
        String key = key(app, context);
        return context == null || context.isEmpty() ? new String[] {key}
                : new String[] {key, lruPrefix + StateKeys.encode(app)};
    }

    /** {@code args} followed by the touch arguments of {@link #TOUCH_FUNCTION}. */
    private byte[][] withTouch(String app, String context, byte[][] args) {
        byte[][] all = Arrays.copyOf(args, args.length + 3);
        all[args.length] = maxStatesPerApp;
        all[args.length + 1] = bytes(context == null || context.isEmpty() ? "" : StateKeys.encode(context));
        all[args.length + 2] = bytes(keyPrefix + StateKeys.encode(app) + ":");
        return all;
    }

    @Override
    public Mono<Versioned> get(String app, String context) {
        String key = key(app, context);
        return Mono.defer(() -> redis.hmget(key, "ver", "state").collectList())
                .flatMap(fields -> {
                    byte[] ver = value(fields, 0);
                    byte[] state = value(fields, 1);
                    if (ver == null || state == null) {
                        return Mono.empty();
                    }
                    return Mono.just(new Versioned(state, Long.parseLong(new String(ver, StandardCharsets.US_ASCII))));
                });
    }

    @Override
    public Mono<Boolean> compareAndSet(String app, String context, long expectedVersion, byte[] state) {
        String key = key(app, context);
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expectedVersion must be >= 0 (0 = absent), got " + expectedVersion);
        }
        if (state == null) {
            throw new IllegalArgumentException("state must not be null");
        }
        String[] keys = keys(app, context);
        byte[][] argv = withTouch(app, context, new byte[][] {bytes(Long.toString(expectedVersion)), state.clone(),
            bytes(Long.toString(StateKeys.initialVersion())), ttlMillis});
        return Mono.defer(() -> redis.<Long>evalsha(casSha, ScriptOutputType.INTEGER, keys, argv).next())
                .onErrorResume(RedisNoScriptException.class,
                        e -> redis.<Long>eval(CAS_SCRIPT, ScriptOutputType.INTEGER, keys, argv).next())
                .map(result -> {
                    if (result > 1) {
                        evictions.add(result - 1);
                    }
                    return result >= 1;
                });
    }

    /**
     * One {@link #OBSERVE_SCRIPT} call; see the class comment. Observations of one state that
     * arrive while a call for it is in flight are written together by the next call
     * ({@link ObserveCoalescer}). Model names with U+0000 or characters outside the BMP (whose
     * modified UTF-8 is not their UTF-8) take the Java path.
     */
    @Override
    public Mono<byte[]> observe(String app, String context, WeightedPolicy policy, List<String> models,
            WeightedStep step) {
        if (!models.stream().allMatch(RedisSelectionStateStore::plainUtf8)) {
            return SelectionStateStore.super.observe(app, context, policy, models, step);
        }
        String key = key(app, context);
        return coalescer.observe(new StateWrite(key, policy, List.copyOf(models)), step,
                steps -> observe(key, app, context, policy, models, steps));
    }

    /** Which observations may share a script call: the same state, policy and linked models. */
    private record StateWrite(String key, WeightedPolicy policy, List<String> models) {
    }

    /** The steps in one script call: the state after each. */
    private Flux<byte[]> observe(String key, String app, String context, WeightedPolicy policy,
            List<String> models, List<WeightedStep> steps) {
        int k = models.size();
        String[] keys = keys(app, context);
        byte[][] args = new byte[6 + k + k * steps.size()][];
        args[0] = ttlMillis;
        args[1] = bytes(Long.toString(StateKeys.initialVersion()));
        args[2] = FLOOR;
        args[3] = bytes(HexFormat.of().formatHex(policy.codec().encode(policy.init(List.of())), 0, 2));
        args[4] = bytes(Integer.toString(k));
        args[5 + k] = bytes(Integer.toString(steps.size()));
        for (int i = 0; i < k; i++) {
            args[5 + i] = models.get(i).getBytes(StandardCharsets.UTF_8);
            for (int s = 0; s < steps.size(); s++) {
                // hex floats: exact, and Lua's tonumber reads them (C strtod)
                args[6 + k + s * k + i] = bytes(Double.toHexString(
                        steps.get(s).decrements().getOrDefault(models.get(i), 0.0)));
            }
        }
        byte[][] argv = withTouch(app, context, args);
        return Mono.defer(() -> redis.<List<byte[]>>evalsha(observeSha, ScriptOutputType.MULTI, keys, argv).next())
                .onErrorResume(RedisNoScriptException.class,
                        e -> redis.<List<byte[]>>eval(OBSERVE_SCRIPT, ScriptOutputType.MULTI, keys, argv).next())
                .flatMapIterable(answer -> {
                    if (answer.isEmpty()) {
                        return answer;
                    }
                    evictions.add(Long.parseLong(new String(answer.get(0), StandardCharsets.US_ASCII)));
                    return answer.subList(1, answer.size());
                })
                // an empty answer: the stored state is about other models, and the optimistic update
                // relinks it, one step at a time
                .switchIfEmpty(Flux.fromIterable(steps)
                        .concatMap(s -> SelectionStateStore.super.observe(app, context, policy, models, s)));
    }

    private static boolean plainUtf8(String name) {
        return name.chars().noneMatch(c -> c == 0 || Character.isSurrogate((char) c));
    }

    @Override
    public long evictions() {
        return evictions.sum();
    }

    /** Closes this store's connection (not the client). */
    @Override
    public void close() {
        connection.close();
        if (ownedClient != null) {
            ownedClient.shutdown();
        }
    }

    /**
     * A store on {@code client} (best one from {@code config.RedisClients}: commands rejected while
     * disconnected, short timeouts), which {@link #close()} shuts down, or shuts down at once if
     * the store cannot start.
     */
    public static RedisSelectionStateStore connect(RedisClient client, String prefix, StateBounds bounds) {
        try {
            return new RedisSelectionStateStore(client, prefix, bounds, true);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    private static byte[] value(List<KeyValue<String, byte[]>> fields, int i) {
        if (fields.size() <= i) {
            return null;
        }
        KeyValue<String, byte[]> kv = fields.get(i);
        return kv.hasValue() ? kv.getValue() : null;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
        return "RedisSelectionStateStore[prefix=" + keyPrefix + "]";
    }
}
