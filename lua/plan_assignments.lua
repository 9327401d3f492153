-- Sets or clears one assignment of a plan or override to a client, and bumps the version every gateway
-- instance polls, so that each reloads the assignments within its refresh interval. Expired assignments
-- are dropped here, on the next write; readers ignore them meanwhile. Called with no ARGV it only reads:
-- the version and the whole hash in one atomic step, so a reader never pairs one version with another's
-- contents, and the Redis time, which expiry times are on.
--
-- KEYS[1]  hash: field = target and client, value = "<expires at ms, 0 for never>\n<assignment>"
-- KEYS[2]  sorted set: field by expiry time, for dropping expired ones
-- KEYS[3]  version counter; created as <Redis time in ms> followed by six zeros, so that versions keep
--          growing when the keys are lost (a flush, a failover that lost writes) and written again
-- ARGV[1]  field
-- ARGV[2]  the assignment, or "" to clear it
-- ARGV[3]  time to live in ms, or "" for none
-- ARGV[4]  the most assignments kept; a new one beyond it is refused
-- Reply    the new version, or an error when full; when reading: {version or "", now in ms, field, value, ...}
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

if #ARGV == 0 then
  local all = redis.call('HGETALL', KEYS[1])
  table.insert(all, 1, string.format('%.0f', now))
  table.insert(all, 1, redis.call('GET', KEYS[3]) or '')
  return all
end

local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, field in ipairs(expired) do
  redis.call('HDEL', KEYS[1], field)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)

if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
    return redis.error_reply('ERR window-rate-limiter: ' .. ARGV[4] .. ' assignments already, the most allowed')
  end
  local expires = 0
  if ARGV[3] ~= '' then
    expires = now + tonumber(ARGV[3])
    redis.call('ZADD', KEYS[2], expires, ARGV[1])
  else
    redis.call('ZREM', KEYS[2], ARGV[1])
  end
  redis.call('HSET', KEYS[1], ARGV[1], expires .. '\n' .. ARGV[2])
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], string.format('%.0f', now) .. '000000')
end
return redis.call('INCR', KEYS[3])
