-- Sliding window counter: the counts of the current and the previous clock-aligned window,
-- the previous one weighted by how much of it still lies inside the sliding window:
--   estimate = previous * (window - elapsed) / window + current
-- A request is allowed while the estimate including it stays within the limit.
--
-- KEYS[1]  the client's counts. Value "<window index>:<current count>:<previous count>"
--          (one key for both windows).
-- ARGV[1]  limit: requests allowed per window, >= 1
-- ARGV[2]  window length in ms, >= 1
-- ARGV[3]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- Reply    {allowed (1|0), remaining, reset ms (allowed: until the current window ends;
--           denied: as retry-after), retry-after ms (0 when allowed)}
--
-- All comparisons are made on estimate * window, in whole numbers, so they are exact
-- (the limiter keeps limit * window below 2^53). A denied request writes nothing.
-- The key expires when the next window ends, after which its counts no longer matter.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local index = math.floor(now / window)
local elapsed = now - index * window

local current, previous = 0, 0
local stored = redis.call('GET', KEYS[1])
if stored then
  local stored_index, stored_current, stored_previous = string.match(stored, '^(%d+):(%d+):(%d+)$')
  stored_index = tonumber(stored_index)
  if stored_index == index then
    current, previous = tonumber(stored_current), tonumber(stored_previous)
  elseif stored_index == index - 1 then
    previous = tonumber(stored_current)
  end
end

local used = previous * (window - elapsed) + current * window
if used + window <= limit * window then
  current = current + 1
  used = used + window
  redis.call('SET', KEYS[1], string.format('%d:%d:%d', index, current, previous), 'PX', 2 * window - elapsed)
  return {1, math.floor((limit * window - used) / window), window - elapsed, 0}
end

-- Denied: find the first moment at which previous * (window - e) + (current + 1) * window <= limit * window.
local wait
if current < limit then
  -- Later in this window, as the previous window's weight fades (previous > 0 here).
  local at = window - math.floor((limit - current - 1) * window / previous)
  wait = at - elapsed
else
  -- In the next window, where this window's count becomes the previous one and the current is zero.
  local at = window - math.floor((limit - 1) * window / current)
  wait = window - elapsed + at
end
return {0, 0, wait, wait}
