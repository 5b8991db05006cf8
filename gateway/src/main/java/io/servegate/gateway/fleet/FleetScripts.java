package io.servegate.gateway.fleet;

/**
 * The Lua scripts {@link RedisFleetStore} runs. Redis runs each atomically and takes its time
 * from its own clock ({@code TIME}), so leases and liveness are judged by one clock, whatever
 * the gateways' clocks say.
 *
 * <p>KEYS (both scripts): 1 members (sorted set, member → lease end in Redis milliseconds),
 * 2 addresses (hash, member → forwarding address), 3 rates (hash, member → its arrival rates),
 * 4 owners (hash, {@code model:version} → {@code "owner epoch pending ready"}, ready {@code 1} once the
 * pending member said it is ready, else empty), 5 epoch counter,
 * 6 generation counter (bumped by every change of members or owners: the plans' compare-and-set),
 * 7 draining (set of the live members that are shutting down: they take nothing and hand off all they own).
 */
final class FleetScripts {

    private FleetScripts() {
    }

    private static final String COMMON = """
            local MEMBERS, ADDRESSES, RATES, OWNERS, EPOCH, GENERATION, DRAINING = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local function live(m)
              local s = redis.call('ZSCORE', MEMBERS, m)
              return s ~= false and tonumber(s) > now
            end
            local function parse(v)
              local cur = redis.call('HGET', OWNERS, v)
              if not cur then return nil end
              local owner, epoch, pending, ready = string.match(cur, '^(%S+) (%d+) ?(%S*) ?(%S*)$')
              return {owner = owner, epoch = epoch, pending = pending, ready = ready}
            end
            """;

    /**
     * One member's heartbeat. ARGV: 1 member, 2 address, 3 lease (ms), 4 rates, 5 {@code JOIN} to
     * join, {@code DRAIN} once it is shutting down, else {@code BEAT}, 6 the number n of versions it releases, then those n (hand-offs it has stopped
     * scheduling, handed on only if their pending member said it was ready), then the versions
     * being handed to it that it is ready for (it has loaded what scheduling them needs). Returns
     * {@code {"EXPIRED"}} when a member that is not joining has no live lease (it must rejoin under
     * a new name; nothing of it remains to be owned), else {@code {"OK", now, generation, members,
     * addresses, rates, owners, draining}}. Members whose lease ran out are removed first.
     */
    static final String HEARTBEAT = COMMON + """
            local id, address, lease, rates, mode = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
            if mode ~= 'JOIN' and not live(id) then
              return {'EXPIRED'}
            end
            local changed = mode == 'JOIN'
            local dead = redis.call('ZRANGEBYSCORE', MEMBERS, '-inf', now)
            for _, d in ipairs(dead) do
              redis.call('ZREM', MEMBERS, d)
              redis.call('HDEL', ADDRESSES, d)
              redis.call('HDEL', RATES, d)
              redis.call('SREM', DRAINING, d)
              changed = true
            end
            if mode == 'DRAIN' and redis.call('SADD', DRAINING, id) == 1 then
              changed = true
            end
            redis.call('ZADD', MEMBERS, now + lease, id)
            redis.call('HSET', ADDRESSES, id, address)
            redis.call('HSET', RATES, id, rates)
            local released = tonumber(ARGV[6])
            for i = 7, 6 + released do
              local a = parse(ARGV[i])
              if a and a.owner == id and a.pending ~= '' and a.ready == '1' then
                redis.call('HSET', OWNERS, ARGV[i], a.pending .. ' ' .. redis.call('INCR', EPOCH) .. ' ')
                changed = true
              end
            end
            for i = 7 + released, #ARGV do
              local a = parse(ARGV[i])
              if a and a.pending == id and a.ready ~= '1' then
                redis.call('HSET', OWNERS, ARGV[i], a.owner .. ' ' .. a.epoch .. ' ' .. id .. ' 1')
                changed = true
              end
            end
            if changed then redis.call('INCR', GENERATION) end
            return {'OK', tostring(now), redis.call('GET', GENERATION) or '0', redis.call('ZRANGE', MEMBERS, 0, -1),
                    redis.call('HGETALL', ADDRESSES), redis.call('HGETALL', RATES), redis.call('HGETALL', OWNERS),
                    redis.call('SMEMBERS', DRAINING)}
            """;

    /**
     * A plan, all or nothing. ARGV: 1 planning member, 2 the generation it planned from, then
     * triples (version, GRANT|HANDOFF|DROP, target). Returns {@code {"OK"}}, {@code {"EXPIRED"}}
     * (the planner's own lease ran out: it is fenced), {@code {"STALE"}} (something changed since
     * it read) or {@code {"CONFLICT", version}} (a grant of a version whose owner is live, a hand-off
     * of one whose owner is not, a target that is not live); nothing is written unless all pass.
     * A grant takes a new epoch; a hand-off keeps the owner's until the owner releases it, and the
     * pending member's word that it is ready if it names the same member again.
     */
    static final String APPLY = COMMON + """
            local id, expected = ARGV[1], ARGV[2]
            if not live(id) then return {'EXPIRED'} end
            if (redis.call('GET', GENERATION) or '0') ~= expected then return {'STALE'} end
            for i = 3, #ARGV, 3 do
              local v, kind, target = ARGV[i], ARGV[i + 1], ARGV[i + 2]
              local a = parse(v)
              if kind == 'GRANT' then
                if not live(target) or (a and live(a.owner)) then return {'CONFLICT', v} end
              elseif kind == 'HANDOFF' then
                if not a or not live(a.owner) or not live(target) then return {'CONFLICT', v} end
              elseif kind ~= 'DROP' then
                return {'CONFLICT', v}
              end
            end
            for i = 3, #ARGV, 3 do
              local v, kind, target = ARGV[i], ARGV[i + 1], ARGV[i + 2]
              if kind == 'GRANT' then
                redis.call('HSET', OWNERS, v, target .. ' ' .. redis.call('INCR', EPOCH) .. ' ')
              elseif kind == 'HANDOFF' then
                local a = parse(v)
                local pending, ready = target, ''
                if target == a.owner then pending = '' end
                if pending == a.pending and a.ready == '1' then ready = ' 1' end
                redis.call('HSET', OWNERS, v, a.owner .. ' ' .. a.epoch .. ' ' .. pending .. ready)
              else
                redis.call('HDEL', OWNERS, v)
              end
            end
            redis.call('INCR', GENERATION)
            return {'OK'}
            """;
}
