-- Sliding log, sorted-set storage: exact. One sorted-set entry per accepted request within the
-- last window. Operators can read it with ZRANGE; the ring storage (sliding_log.lua) is smaller.
--
-- KEYS[1]  the client's log: score = time of an accepted request in ms, member unique per request
-- ARGV[1]  limit: requests allowed in any window-long span, >= 1
-- ARGV[2]  window length in ms, >= 1
-- ARGV[3]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- Reply    {allowed (1|0), remaining, reset ms (until the oldest entry leaves the window),
--           retry-after ms (0 when allowed)}
--
-- A request at time t counts while now - window < t. Denied requests are not logged.
-- The key expires one window after the newest accepted request.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)

if count >= limit then
  -- The request is allowed once all but limit - 1 entries have left: wait for entry number count - limit.
  local entry = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
  local wait = tonumber(entry[2]) + window - now
  return {0, 0, wait, wait}
end

-- Members only need to be unique: the time, with a sequence number when two requests share a millisecond.
local member = string.format('%d', now)
local sequence = count
while redis.call('ZADD', key, 'NX', now, member) == 0 do
  sequence = sequence + 1
  member = string.format('%d-%d', now, sequence)
end
redis.call('PEXPIRE', key, window)

local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {1, limit - count - 1, tonumber(oldest[2]) + window - now, 0}
