-- Fixed window: one counter per clock-aligned window (index = floor(now / window), epoch-aligned).
--
-- Key      the window's end and its count in one decimal integer, which Redis stores in 16 bytes
--          (a string of the same digits would take 48):
--            <end ms since 2025-01-01T00:00Z><count><digits of count>
--          e.g. 60561660000502 = 60561660000, 50, 2: 50 requests in the window ending 2026-12-02T22:41Z.
--          Windows ending before 2025 or counts of 10 digits are written as "<index>:<count>:<window ms>",
--          the previous version's layout, which is read too (and "<index>:<count>", older still, as
--          of the configured window). A stored window that ended before the current one began reads as
--          zero, even when the caller's clock (an explicit `now`) is not the one Redis expires keys by.
--          Expires when its window ends.
-- Returns  allowed, remaining (after this request when allowed), reset = until the window ends,
--          retry-after = the window's end (0 when allowed), record.
--
-- A stored window that has not ended before the current one began keeps its count, and the current
-- window then runs until the first window edge at or after the stored one's end. So a changed window
-- length takes effect once the counted window is over: a longer window that contains it keeps its
-- count, a shorter one starts when it ends. A window ahead of now (the Redis clock stepped back, as
-- after a failover to a lagging replica) keeps counting until it ends. A changed limit applies at once
-- to the same count. Neither hands out a fresh window.
local FIXED_WINDOW_EPOCH = 1735689600000

-- The stored window's end (ms since the Unix epoch) and count, or nil for a value of no known layout.
local function fixed_window_read(stored, window)
  local index, count, length = string.match(stored, '^(%d+):(%d+):?(%d*)$')
  if index then
    return (tonumber(index) + 1) * (tonumber(length) or window), tonumber(count)
  end
  local width = tonumber(string.sub(stored, -1))
  if string.find(stored, '^%d+$') and width and width >= 1 and #stored >= width + 2 then
    return tonumber(string.sub(stored, 1, -width - 2)) + FIXED_WINDOW_EPOCH,
      tonumber(string.sub(stored, -width - 1, -2))
  end
end

local function fixed_window_value(window_end, count, window)
  local since, digits = window_end - FIXED_WINDOW_EPOCH, string.format('%d', count)
  if since >= 1 and #digits <= 9 then
    return string.format('%d%s%d', since, digits, #digits)
  end
  return string.format('%d:%s:%d', window_end / window - 1, digits, window)
end

algorithms['FIXED_WINDOW'] = function(key, limit, window, now, cost)
  local window_end = (math.floor(now / window) + 1) * window

  local count = 0
  local stored = redis.call('GET', key)
  if stored then
    local stored_end, stored_count = fixed_window_read(stored, window)
    if stored_end and stored_end > window_end - window then
      count = stored_count
      window_end = math.max(window_end, math.ceil(stored_end / window) * window)
    end
  end
  local until_end = window_end - now

  if count + cost > limit then
    return false, math.max(0, limit - count), until_end, until_end
  end
  return true, limit - count - cost, until_end, 0, function()
    redis.call('SET', key, fixed_window_value(window_end, count + cost, window), 'PX', until_end)
  end
end
