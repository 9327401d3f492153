-- Fixed window: one counter per clock-aligned window (index = floor(now / window), epoch-aligned).
--
-- Key      "<window index>:<count>:<window ms>": the count of window number index of that length (keys
--          written before the length was stored have no third field and mean the configured window).
--          A stored window that ended before the current one began reads as zero, even when the
--          caller's clock (an explicit `now`) is not the one Redis expires keys by. Expires when its
--          window ends.
-- Returns  allowed, remaining (after this request when allowed), reset = until the window ends,
--          retry-after = the window's end (0 when allowed), record.
--
-- A stored window that has not ended before the current one began keeps its count, and the current
-- window then runs until the first window edge at or after the stored one's end. So a changed window
-- length takes effect once the counted window is over: a longer window that contains it keeps its
-- count, a shorter one starts when it ends. A window ahead of now (the Redis clock stepped back, as
-- after a failover to a lagging replica) keeps counting until it ends. A changed limit applies at once
-- to the same count. Neither hands out a fresh window.
algorithms['FIXED_WINDOW'] = function(key, limit, window, now, cost)
  local window_end = (math.floor(now / window) + 1) * window

  local count = 0
  local stored = redis.call('GET', key)
  if stored then
    local stored_index, stored_count, stored_window = string.match(stored, '^(%d+):(%d+):?(%d*)$')
    if stored_index then
      local stored_end = (tonumber(stored_index) + 1) * (tonumber(stored_window) or window)
      if stored_end > window_end - window then
        count = tonumber(stored_count)
        window_end = math.max(window_end, math.ceil(stored_end / window) * window)
      end
    end
  end
  local until_end = window_end - now

  if count + cost > limit then
    return false, math.max(0, limit - count), until_end, until_end
  end
  return true, limit - count - cost, until_end, 0, function()
    redis.call('SET', key, string.format('%d:%d:%d', window_end / window - 1, count + cost, window), 'PX', until_end)
  end
end
