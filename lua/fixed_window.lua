-- Fixed window: one counter per clock-aligned window (index = floor(now / window), epoch-aligned).
--
-- KEYS[1]  the client's counter. Value "<window index>:<count>", so a stale window reads as zero
--          even when the caller's clock (ARGV[3]) is not the one Redis expires keys by.
-- ARGV[1]  limit: requests allowed per window, >= 1
-- ARGV[2]  window length in ms, >= 1
-- ARGV[3]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- Reply    {allowed (1|0), remaining, reset ms (until the window ends), retry-after ms (0 when allowed)}
--
-- A denied request writes nothing. The key expires when its window ends.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local index = math.floor(now / window)
local until_end = (index + 1) * window - now

local count = 0
local stored = redis.call('GET', KEYS[1])
if stored then
  local stored_index, stored_count = string.match(stored, '^(%d+):(%d+)$')
  if tonumber(stored_index) == index then
    count = tonumber(stored_count)
  end
end

if count >= limit then
  return {0, 0, until_end, until_end}
end

count = count + 1
redis.call('SET', KEYS[1], string.format('%d:%d', index, count), 'PX', until_end)
return {1, limit - count, until_end, 0}
