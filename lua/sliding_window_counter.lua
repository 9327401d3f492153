-- Sliding window counter: the counts of the current and the previous clock-aligned window, the
-- previous one weighted by how much of it still lies inside the sliding window:
--   estimate = previous * (window - elapsed) / window + current
-- A request is allowed while the estimate including it (its cost) stays within the limit.
--
-- Key      "<window index>:<current count>:<previous count>" (both windows in one key). Expires when
--          the next window ends, after which its counts no longer matter.
-- Returns  allowed, remaining (whole requests left under the estimate), reset (allowed: until the
--          current window ends; denied: as retry-after), retry-after (0 when allowed), record.
--
-- All comparisons are made on estimate * window, in whole numbers, so they are exact (the limiter
-- keeps limit * window below 2^53).
algorithms['SLIDING_WINDOW_COUNTER'] = function(key, limit, window, now, cost)
  local index = math.floor(now / window)
  local elapsed = now - index * window

  local current, previous = 0, 0
  local stored = redis.call('GET', key)
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
  if used + cost * window <= limit * window then
    local remaining = math.floor((limit * window - used - cost * window) / window)
    return true, remaining, window - elapsed, 0, function()
      redis.call('SET', key, string.format('%d:%d:%d', index, current + cost, previous), 'PX', 2 * window - elapsed)
    end
  end

  -- Denied: the first moment at which previous * (window - e) + (current + cost) * window <= limit * window.
  local wait
  if current + cost <= limit then
    -- Later in this window, as the previous window's weight fades (previous > 0 here).
    wait = window - math.floor((limit - current - cost) * window / previous) - elapsed
  else
    -- In the next window, where this window's count becomes the previous one and the current is zero.
    wait = window - elapsed + window - math.floor((limit - cost) * window / current)
  end
  return false, math.max(0, math.floor((limit * window - used) / window)), wait, wait
end
