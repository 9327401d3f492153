-- Sliding window counter: the counts of the current and the previous clock-aligned window, the
-- previous one weighted by how much of it still lies inside the sliding window:
--   estimate = previous * (window - elapsed) / window + current
-- A request is allowed while the estimate including it (its cost) stays within the limit.
--
-- Key      both windows in one decimal integer, which Redis stores in 16 bytes (a string of the
--          same digits would take 48), the window length as mantissa * 10^exponent:
--            <index - index of 2025-01-01T00:00Z><mantissa><current><previous><digits of mantissa>
--            <exponent><digits of each count>
--          the counts zero-padded to one width; e.g. 1009360 6 050 100 1 4 3 (without the spaces): 50
--          requests this minute, 100 the minute before, 1,009,360 minutes after 2025 began. A window
--          index before 2025, a mantissa or a count of 10 digits is written as
--          "<window index>:<current count>:<previous count>:<window ms>", the previous version's
--          layout, which is read too (and, older still, without the fourth field, as of the
--          configured window). Expires when the next window ends, after which its counts no longer
--          matter.
-- Returns  allowed, remaining (whole requests left under the estimate), reset (allowed: until the
--          current window ends; denied: as retry-after), retry-after (0 when allowed; -1 when the cost is
--          above the limit: such a request never passes, reset is then until the estimate is zero), record.
--
-- All comparisons are made on estimate * window, in whole numbers, so they are exact (the limiter
-- keeps limit * window below 2^53).
--
-- A changed limit applies at once to the same counts, each read as at most the limit (a count the
-- current policy could have reached). A changed window length: what the stored counts estimated for
-- their own window at now (rounded up, at most the limit) becomes the current count of the new window,
-- so the client keeps what it used and nothing is handed out afresh; this one rewrite is made even when
-- the request is denied (never on a peek, cost 0, which reads the same and writes nothing). So a change of policy (a plan changed, an override began or ended, a config
-- edit) refuses a client at most until the current window ends and the previous one's weight has faded
-- by this request's share of the limit. A stored window ahead of now (the
-- Redis clock stepped back, as after a failover to a lagging replica) stays the current window, with
-- the previous one counted in full until the clock reaches it.
local function counter_estimate(previous, current, window, elapsed)
  return previous * (window - math.max(0, elapsed)) + current * window
end

local COUNTER_EPOCH = 1735689600000

-- The stored window index, current and previous counts and window length (nil when the value does not
-- say: the configured window), or nil for a value of no known layout.
local function counter_read(stored)
  -- a plain search first: the older layouts' pattern is the dearer test, and most keys are digits alone
  if string.find(stored, ':', 1, true) then
    local index, current, previous, length = string.match(stored, '^(%d+):(%d+):(%d+):?(%d*)$')
    if index then
      return tonumber(index), tonumber(current), tonumber(previous), tonumber(length)
    end
    return nil
  end
  if not string.find(stored, '^%d+$') or #stored < 7 then
    return nil
  end
  local n = #stored
  local width, exponent, digits = tonumber(string.sub(stored, n)), tonumber(string.sub(stored, n - 1, n - 1)),
    tonumber(string.sub(stored, n - 2, n - 2))
  local previous_at = n - 2 - width
  local current_at = previous_at - width
  local mantissa_at = current_at - digits
  if width < 1 or digits < 1 or mantissa_at < 2 then
    return nil
  end
  local window = tonumber(string.sub(stored, mantissa_at, current_at - 1)) * 10 ^ exponent
  return tonumber(string.sub(stored, 1, mantissa_at - 1)) + math.floor(COUNTER_EPOCH / window),
    tonumber(string.sub(stored, current_at, previous_at - 1)), tonumber(string.sub(stored, previous_at, n - 3)),
    window
end

local function counter_value(index, current, previous, window)
  local since = index - math.floor(COUNTER_EPOCH / window)
  local mantissa, exponent = window, 0
  while mantissa % 10 == 0 and exponent < 9 do
    mantissa, exponent = mantissa / 10, exponent + 1
  end
  mantissa = string.format('%d', mantissa)
  local width = #string.format('%d', math.max(current, previous))
  if since >= 1 and #mantissa <= 9 and width <= 9 then
    local count = '%0' .. width .. 'd'
    return string.format('%d%s' .. count .. count .. '%d%d%d', since, mantissa, current, previous, #mantissa,
      exponent, width)
  end
  return string.format('%d:%d:%d:%d', index, current, previous, window)
end

algorithms['SLIDING_WINDOW_COUNTER'] = function(key, limit, window, now, cost)
  local index = math.floor(now / window)

  local current, previous, stored_window = 0, 0, nil
  local stored = redis.call('GET', key)
  if stored then
    local stored_index, stored_current, stored_previous, stored_length = counter_read(stored)
    if stored_index then
      stored_window = stored_length or window
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
      -- counts the current limit could have reached: more would lock the client out past the next window
      current, previous = math.min(current, limit), math.min(previous, limit)
    end
  end
  -- negative while the stored window is ahead of the clock
  local elapsed = now - index * window
  if stored_window and stored_window ~= window and cost > 0 then
    -- Stored in the new terms at once, allowed or not: read later in the old terms, the counts would
    -- fade by the old window and break the Retry-After given now.
    redis.call('SET', key, counter_value(index, current, 0, window), 'PX', 2 * window - elapsed)
  end

  local used = counter_estimate(previous, current, window, elapsed)
  if cost > limit then
    -- never passes: reset is when the estimate is zero (the end of the next window while this one counts)
    local reset = window - elapsed + ((current > 0) and window or 0)
    return false, math.max(0, math.floor((limit * window - used) / window)), reset, -1
  end
  if used + cost * window <= limit * window then
    local remaining = math.floor((limit * window - used - cost * window) / window)
    return true, remaining, window - elapsed, 0, function()
      redis.call('SET', key, counter_value(index, current + cost, previous, window), 'PX', 2 * window - elapsed)
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

-- Settle (see settle.lua). The stored counts are first read as of now, in their own length: a window
-- that has ended becomes the previous one, one ended before that is gone. A refund comes out of the count
-- the reservation went into, the window ending at at + reset (the one holding `at`, or one ahead of a clock
-- that had stepped back), while it still weighs: the current window's count,
-- or the previous one's (which then gives back only its remaining weight of the refund, as it counts); a
-- count two windows old, or one restated in another length by a policy change, gives nothing back. A late
-- charge is added to the current window's count (in the stored length; a fresh key in the reservation's),
-- even past the limit; decisions read a count as at most the limit, so the client is refused as one that
-- used its whole limit now: until the window ends and the previous one's weight has faded enough.
settles['SLIDING_WINDOW_COUNTER'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  local index, current, previous, length
  local stored = redis.call('GET', key)
  if stored then
    index, current, previous, length = counter_read(stored)
  end
  if index then
    length = length or window
    local now_index = math.floor(now / length)
    if index == now_index - 1 then
      index, current, previous = now_index, 0, current
    elseif index < now_index - 1 then
      index, current, previous = now_index, 0, 0
    end
  end
  if actual < reserved then
    if not index or length ~= window then
      return 0
    end
    local at_index, back = math.floor((at + reset - 1) / window), 0
    if at_index == index then
      back = math.min(reserved - actual, current)
      current = current - back
    elseif at_index == index - 1 then
      back = math.min(reserved - actual, previous)
      previous = previous - back
    end
    if back == 0 then
      return 0
    end
    redis.call('SET', key, counter_value(index, current, previous, window), 'PX', 2 * window - (now - index * window))
    return -back
  end
  if not index then
    index, current, previous, length = math.floor(now / window), 0, 0, window
  end
  local charge = actual - reserved
  redis.call('SET', key, counter_value(index, current + charge, previous, length), 'PX',
    2 * length - (now - index * length))
  return charge
end
