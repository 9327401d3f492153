-- Token bucket as GCRA (generic cell rate algorithm): `limit` requests per `window` sustained, up to
-- `burst` at once. One key holds the theoretical arrival time (TAT): when the bucket would be full
-- again if no more requests came. Cheap at any limit: one small string per client.
--
-- KEYS[1]  the client's TAT in ms since the epoch (a decimal, fractions kept: the emission interval
--          window / limit need not be whole milliseconds)
-- ARGV[1]  limit: requests per window at the sustained rate, >= 1
-- ARGV[2]  window length in ms, >= 1
-- ARGV[3]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- ARGV[4]  burst: requests allowed at once from a full bucket, >= 1
-- Reply    {allowed (1|0), remaining (requests allowed right now after this one), reset ms (until the
--           bucket is full again), retry-after ms (0 when allowed)}
--
-- A denied request writes nothing. The key expires when the bucket is full again.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local burst = tonumber(ARGV[4])

local interval = window / limit
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end

local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  local wait = math.ceil(allow_at - now)
  return {0, 0, wait, wait}
end

local until_full = math.ceil(new_tat - now)
redis.call('SET', KEYS[1], string.format('%.17g', new_tat), 'PX', until_full)
return {1, math.floor((now - allow_at) / interval), until_full, 0}
