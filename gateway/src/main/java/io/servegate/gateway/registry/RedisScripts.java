package io.servegate.gateway.registry;

/**
 * The Lua scripts {@link RedisRegistry} runs server-side. Redis runs a script atomically, so each
 * write validates and applies in one step: two gateways racing on the same write get exactly one
 * success. Scripts mirror {@link RegistryState}'s rules and messages.
 *
 * <p>KEYS (all scripts): 1 apps, 2 links, 3 models, 4 current, 5 replicas, 6 revision, 7 pipelines,
 * 8 profiles.
 *
 * <p>Write script ARGV: 1 operation, 2 change channel, then the operation's arguments. It returns
 * {@code {"OK", newRevision}} after a change (the revision was INCRed and the new revision
 * PUBLISHed on the channel), {@code {"NOOP", revision}} when nothing had to change, or
 * {@code {KIND, message}} with KIND one of {@code NOT_FOUND}, {@code CONFLICT}, {@code INVALID}
 * (nothing was changed). Every check happens before the first write.
 */
final class RedisScripts {

    private RedisScripts() {
    }

    /** Reads everything in one atomic step: {revision, apps, links, models, current, replicas, pipelines, profiles}. */
    static final String READ = """
            return {redis.call('GET', KEYS[6]) or '0', redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]),
                    redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]), redis.call('HGETALL', KEYS[5]),
                    redis.call('HGETALL', KEYS[7]), redis.call('HGETALL', KEYS[8])}
            """;

    static final String WRITE = """
            local APPS, LINKS, MODELS, CURRENT, REPLICAS, REVISION = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
            local PIPELINES, PROFILES = KEYS[7], KEYS[8]
            local op, channel = ARGV[1], ARGV[2]

            local function q(s) return "'" .. s .. "'" end
            local function fail(kind, msg) return {kind, msg} end
            local function noop() return {'NOOP', tonumber(redis.call('GET', REVISION) or '0')} end
            local function changed()
              local rev = redis.call('INCR', REVISION)
              redis.call('PUBLISH', channel, tostring(rev))
              return {'OK', rev}
            end
            local function encodeList(t)
              if #t == 0 then return '[]' end
              return cjson.encode(t)
            end

            -- numeric-aware version order, byte-wise (no locale), same as VersionOrder.java
            local function chunks(s)
              local t, i, n = {}, 1, #s
              while i <= n do
                local a, b = string.find(s, '^%d+', i)
                if not a then a, b = string.find(s, '^%D+', i) end
                t[#t + 1] = string.sub(s, a, b)
                i = b + 1
              end
              return t
            end
            local function bytecmp(a, b)
              local n = math.min(#a, #b)
              for k = 1, n do
                local x, y = string.byte(a, k), string.byte(b, k)
                if x ~= y then if x < y then return -1 else return 1 end end
              end
              if #a == #b then return 0 end
              if #a < #b then return -1 else return 1 end
            end
            local function natcmp(a, b)
              local ca, cb = chunks(a), chunks(b)
              for k = 1, math.min(#ca, #cb) do
                local x, y, c = ca[k], cb[k], 0
                if string.find(x, '^%d') and string.find(y, '^%d') then
                  local xs = (string.gsub(x, '^0+', ''))
                  local ys = (string.gsub(y, '^0+', ''))
                  if #xs ~= #ys then
                    if #xs < #ys then c = -1 else c = 1 end
                  else
                    c = bytecmp(xs, ys)
                  end
                else
                  c = bytecmp(x, y)
                end
                if c ~= 0 then return c end
              end
              if #ca ~= #cb then if #ca < #cb then return -1 else return 1 end end
              return bytecmp(a, b)
            end

            local function versionsOf(name)
              local prefix, out = name .. ':', {}
              for _, f in ipairs(redis.call('HKEYS', MODELS)) do
                if string.sub(f, 1, #prefix) == prefix then out[#out + 1] = string.sub(f, #prefix + 1) end
              end
              return out
            end
            -- input type shared by all versions of a model, or nil when it has none
            local function modelInputType(name)
              local cur = redis.call('HGET', CURRENT, name)
              local json = cur and redis.call('HGET', MODELS, name .. ':' .. cur)
              if not json then
                local vs = versionsOf(name)
                if #vs == 0 then return nil end
                json = redis.call('HGET', MODELS, name .. ':' .. vs[1])
              end
              return cjson.decode(json).inputType
            end
            -- nil if every model exists and takes appType, else an error reply
            local function checkLinkable(app, appType, first)
              for i = first, #ARGV do
                local m = ARGV[i]
                local t = modelInputType(m)
                if not t then return fail('NOT_FOUND', 'model ' .. q(m) .. ' not found') end
                if t ~= appType then
                  return fail('INVALID', 'model ' .. q(m) .. ' takes ' .. q(t) .. ' but app ' .. q(app) .. ' takes ' .. q(appType))
                end
              end
              return nil
            end

            if op == 'addApp' then
              -- name, appJson, inputType, linksJson, linked model...
              local name, json, inputType, links = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
              if redis.call('HEXISTS', APPS, name) == 1 then return fail('CONFLICT', 'app ' .. q(name) .. ' already exists') end
              if redis.call('HEXISTS', PIPELINES, name) == 1 then return fail('CONFLICT', 'a pipeline named ' .. q(name) .. ' exists') end
              local err = checkLinkable(name, inputType, 7)
              if err then return err end
              redis.call('HSET', APPS, name, json)
              redis.call('HSET', LINKS, name, links)
              return changed()

            elseif op == 'deleteApp' then
              local name = ARGV[3]
              if redis.call('HDEL', APPS, name) == 0 then return fail('NOT_FOUND', 'app ' .. q(name) .. ' not found') end
              redis.call('HDEL', LINKS, name)
              return changed()

            elseif op == 'addPipeline' then
              -- name, pipelineJson, then (model, the input type the pipeline gives it) pairs; the graph
              -- itself was validated by the caller (PipelineGraph)
              local name, json = ARGV[3], ARGV[4]
              if redis.call('HEXISTS', PIPELINES, name) == 1 then return fail('CONFLICT', 'pipeline ' .. q(name) .. ' already exists') end
              if redis.call('HEXISTS', APPS, name) == 1 then return fail('CONFLICT', 'an app named ' .. q(name) .. ' exists') end
              for i = 5, #ARGV, 2 do
                local m, want = ARGV[i], ARGV[i + 1]
                local t = modelInputType(m)
                if not t then return fail('NOT_FOUND', 'model ' .. q(m) .. ' not found') end
                if t ~= want then
                  return fail('INVALID', 'model ' .. q(m) .. ' takes ' .. q(t) .. ' but pipeline ' .. q(name) .. ' gives it ' .. q(want))
                end
              end
              redis.call('HSET', PIPELINES, name, json)
              return changed()

            elseif op == 'deletePipeline' then
              local name = ARGV[3]
              if redis.call('HDEL', PIPELINES, name) == 0 then return fail('NOT_FOUND', 'pipeline ' .. q(name) .. ' not found') end
              return changed()

            elseif op == 'addModel' then
              -- name, version, modelJson, inputType
              local name, version, json, inputType = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
              local key = name .. ':' .. version
              if redis.call('HEXISTS', MODELS, key) == 1 then
                return fail('CONFLICT', 'model version ' .. q(key) .. ' already exists')
              end
              local t = modelInputType(name)
              if t and t ~= inputType then
                return fail('INVALID', 'model ' .. q(name) .. ' takes ' .. q(t) .. '; version ' .. q(version) .. ' declares ' .. q(inputType))
              end
              if not t then
                local all = redis.call('HGETALL', LINKS)
                for i = 1, #all, 2 do
                  for _, m in ipairs(cjson.decode(all[i + 1])) do
                    if m == name then
                      local appJson = redis.call('HGET', APPS, all[i])
                      local appType = appJson and cjson.decode(appJson).inputType
                      if appType and appType ~= inputType then
                        return fail('INVALID', 'app ' .. q(all[i]) .. ' is linked to model ' .. q(name) .. ' and takes ' .. q(appType)
                            .. '; version ' .. q(version) .. ' declares ' .. q(inputType))
                      end
                    end
                  end
                end
              end
              redis.call('HSET', MODELS, key, json)
              redis.call('HSET', CURRENT, name, version)
              return changed()

            elseif op == 'setModelVersion' then
              local name, version = ARGV[3], ARGV[4]
              local key = name .. ':' .. version
              if redis.call('HEXISTS', MODELS, key) == 0 then return fail('NOT_FOUND', 'model version ' .. q(key) .. ' not found') end
              if redis.call('HGET', CURRENT, name) == version then return noop() end
              redis.call('HSET', CURRENT, name, version)
              return changed()

            elseif op == 'deleteVersionedModel' then
              local name, version = ARGV[3], ARGV[4]
              local key = name .. ':' .. version
              if redis.call('HDEL', MODELS, key) == 0 then return fail('NOT_FOUND', 'model version ' .. q(key) .. ' not found') end
              local all = redis.call('HGETALL', REPLICAS)
              for i = 1, #all, 2 do
                local r = cjson.decode(all[i + 1])
                if r.modelName == name and r.modelVersion == version then redis.call('HDEL', REPLICAS, all[i]) end
              end
              local prefix = key .. ':'
              for _, f in ipairs(redis.call('HKEYS', PROFILES)) do
                if string.sub(f, 1, #prefix) == prefix then redis.call('HDEL', PROFILES, f) end
              end
              if redis.call('HGET', CURRENT, name) == version then
                local best = nil
                for _, v in ipairs(versionsOf(name)) do
                  if best == nil or natcmp(v, best) > 0 then best = v end
                end
                if best then redis.call('HSET', CURRENT, name, best) else redis.call('HDEL', CURRENT, name) end
              end
              return changed()

            elseif op == 'addModelLinks' then
              -- app, model...
              local app = ARGV[3]
              local appJson = redis.call('HGET', APPS, app)
              if not appJson then return fail('NOT_FOUND', 'app ' .. q(app) .. ' not found') end
              local err = checkLinkable(app, cjson.decode(appJson).inputType, 4)
              if err then return err end
              local links = cjson.decode(redis.call('HGET', LINKS, app) or '[]')
              local have, added = {}, false
              for _, m in ipairs(links) do have[m] = true end
              for i = 4, #ARGV do
                if not have[ARGV[i]] then
                  have[ARGV[i]] = true
                  links[#links + 1] = ARGV[i]
                  added = true
                end
              end
              if not added then return noop() end
              redis.call('HSET', LINKS, app, encodeList(links))
              return changed()

            elseif op == 'deleteModelLinks' then
              local app = ARGV[3]
              if redis.call('HEXISTS', APPS, app) == 0 then return fail('NOT_FOUND', 'app ' .. q(app) .. ' not found') end
              local drop = {}
              for i = 4, #ARGV do drop[ARGV[i]] = true end
              local links, kept = cjson.decode(redis.call('HGET', LINKS, app) or '[]'), {}
              for _, m in ipairs(links) do if not drop[m] then kept[#kept + 1] = m end end
              if #kept == #links then return noop() end
              redis.call('HSET', LINKS, app, encodeList(kept))
              return changed()

            elseif op == 'addReplica' then
              -- id, modelName, modelVersion, replicaJson
              local id, name, version, json = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
              local key = name .. ':' .. version
              if redis.call('HEXISTS', MODELS, key) == 0 then return fail('NOT_FOUND', 'model version ' .. q(key) .. ' not found') end
              if redis.call('HGET', REPLICAS, id) == json then return noop() end
              redis.call('HSET', REPLICAS, id, json)
              return changed()

            elseif op == 'putProfile' then
              -- name, version, profileKey, profileJson
              local key = ARGV[3] .. ':' .. ARGV[4]
              if redis.call('HEXISTS', MODELS, key) == 0 then return fail('NOT_FOUND', 'model version ' .. q(key) .. ' not found') end
              if redis.call('HGET', PROFILES, ARGV[5]) == ARGV[6] then return noop() end
              redis.call('HSET', PROFILES, ARGV[5], ARGV[6])
              return changed()

            elseif op == 'applyPipelinePlan' then
              -- pipeline, expected pipeline JSON, new pipeline JSON, then (model key, expected JSON, new JSON)
              -- triples: the caller validated the plan on its snapshot; each record must still be as it saw it
              local name = ARGV[3]
              local stored = redis.call('HGET', PIPELINES, name)
              if not stored then return fail('NOT_FOUND', 'pipeline ' .. q(name) .. ' not found') end
              if stored ~= ARGV[4] then return fail('CONFLICT', 'pipeline ' .. q(name) .. ' changed meanwhile: apply again') end
              for i = 6, #ARGV, 3 do
                local m = redis.call('HGET', MODELS, ARGV[i])
                if not m then return fail('NOT_FOUND', 'model version ' .. q(ARGV[i]) .. ' not found') end
                if m ~= ARGV[i + 1] then return fail('CONFLICT', 'model version ' .. q(ARGV[i]) .. ' changed meanwhile: apply again') end
              end
              local any = stored ~= ARGV[5]
              for i = 6, #ARGV, 3 do any = any or ARGV[i + 1] ~= ARGV[i + 2] end
              if not any then return noop() end
              redis.call('HSET', PIPELINES, name, ARGV[5])
              for i = 6, #ARGV, 3 do redis.call('HSET', MODELS, ARGV[i], ARGV[i + 2]) end
              return changed()

            elseif op == 'removeReplica' then
              if redis.call('HDEL', REPLICAS, ARGV[3]) == 0 then return noop() end
              return changed()
            end
            return redis.error_reply('servegate registry: unknown operation ' .. tostring(op))
            """;
}
