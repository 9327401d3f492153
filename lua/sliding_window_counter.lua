-- Sliding window counter: the counts of the current and the previous clock-aligned window, the
-- previous one weighted by how much of it still lies inside the sliding window:
--   estimate = previous * (window - elapsed) / window + current
-- A request is allowed while the estimate including it (its cost) stays within the limit.
--
-- Key      "<window index>:<current count>:<previous count>:<window ms>" (both windows in one key;
--          keys written before the length was stored have no fourth field and mean the configured
--          window). Expires when the next window ends, after which its counts no longer matter.
-- Returns  allowed, remaining (whole requests left under the estimate), reset (allowed: until the
--          current window ends; denied: as retry-after), retry-after (0 when allowed), record.
--
-- All comparisons are made on estimate * window, in whole numbers, so they are exact (the limiter
-- keeps limit * window below 2^53).
--
-- A changed limit applies at once to the same counts. A changed window length: what the stored counts
-- estimated for their own window at now (rounded up) becomes the current count of the new window, so
-- the client keeps what it used and nothing is handed out afresh; this one rewrite is made even when
-- the request is denied. A stored window ahead of now (the
-- Redis clock stepped back, as after a failover to a lagging replica) stays the current window, with
-- the previous one counted in full until the clock reaches it.
local function counter_estimate(previous, current, window, elapsed)
  return previous * (window - math.max(0, elapsed)) + current * window
end

algorithms['SLIDING_WINDOW_COUNTER'] = function(key, limit, window, now, cost)
  local index = math.floor(now / window)

  local current, previous, stored_window = 0, 0, nil
  local stored = redis.call('GET', key)
  if stored then
    local stored_index, stored_current, stored_previous, stored_length =
      string.match(stored, '^(%d+):(%d+):(%d+):?(%d*)$')
    if stored_index then
      stored_index, stored_current, stored_previous = tonumber(stored_index), tonumber(stored_current),
        tonumber(stored_previous)
      stored_window = tonumber(stored_length) or window
      -- the stored counts as of now, in the stored window's own terms
      local now_index = math.floor(now / stored_window)
      if stored_index >= now_index then
        -- the same window, or one ahead of the clock: keep counting in it
        now_index, current, previous = stored_index, stored_current, stored_previous
      elseif stored_index == now_index - 1 then
        previous = stored_current
      end
      if stored_window == window then
        index = now_index
      else
        local used = counter_estimate(previous, current, stored_window, now - now_index * stored_window)
        current = math.floor(used / stored_window)
        if current * stored_window < used then
          current = current + 1
        end
        previous = 0
      end
    end
  end
  -- negative while the stored window is ahead of the clock
  local elapsed = now - index * window
  if stored_window and stored_window ~= window then
    -- Stored in the new terms at once, allowed or not: read later in the old terms, the counts would
    -- fade by the old window and break the Retry-After given now.
    redis.call('SET', key, string.format('%d:%d:%d:%d', index, current, 0, window), 'PX', 2 * window - elapsed)
  end

  local used = counter_estimate(previous, current, window, elapsed)
  if used + cost * window <= limit * window then
    local remaining = math.floor((limit * window - used - cost * window) / window)
    return true, remaining, window - elapsed, 0, function()
      redis.call('SET', key, string.format('%d:%d:%d:%d', index, current + cost, previous, window),
        'PX', 2 * window - elapsed)
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
