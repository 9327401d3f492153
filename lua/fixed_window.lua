-- Fixed window: one counter per clock-aligned window (index = floor(now / window), epoch-aligned).
--
-- Key      the window's index, its length and its count in one decimal integer, which Redis stores in
--          16 bytes (a string of the same digits would take 48), the length as mantissa * 10^exponent:
--            <index - index of 2025-01-01T00:00Z><mantissa><count><digits of mantissa><exponent>
--            <digits of count>
--          e.g. 1009360 6 50 1 4 2 (without the spaces): 50 requests in the minute 1,009,360 minutes after
--          2025 began. A window index before 2025, a mantissa or a count of 10 digits is written as
--          "<window index>:<count>:<window ms>", which is read too. Expires when its window ends.
-- Returns  allowed, remaining (after this request when allowed), reset = until the window ends,
--          retry-after = until the window ends (0 when allowed; -1 when the cost is above the limit:
--          such a request never passes), record.
--
-- A stored window of the current length that ended before the current one began reads as zero; one
-- ahead of now (the Redis clock stepped back, as after a failover to a lagging replica) keeps counting
-- until it ends. A changed limit applies at once to the same count. A stored window of another length
-- (a plan changed, an override began or ended, a config edit) that has not ended before the current
-- window began: what it counted stays used, in the current window of the current length, written at once
-- even when the request is denied; at most the limit is carried (a count the current policy could have
-- reached). So a change of policy never locks a client out past the current window's end, and never hands
-- out a fresh window. One that ended before the current window began reads as zero.
local FIXED_WINDOW_EPOCH = 1735689600000

-- The stored window's index (in its own length), length in ms and count, or nil for a value of no known
-- layout.
local function fixed_window_read(stored)
  local index, count, length = string.match(stored, '^(%d+):(%d+):(%d+)$')
  if index then
    return tonumber(index), tonumber(length), tonumber(count)
  end
  if not string.find(stored, '^%d+$') or #stored < 6 then
    return nil
  end
  local n = #stored
  local width, exponent, digits = tonumber(string.sub(stored, n)), tonumber(string.sub(stored, n - 1, n - 1)),
    tonumber(string.sub(stored, n - 2, n - 2))
  local count_at = n - 2 - width
  local mantissa_at = count_at - digits
  if width < 1 or digits < 1 or mantissa_at < 2 then
    return nil
  end
  local window = tonumber(string.sub(stored, mantissa_at, count_at - 1)) * 10 ^ exponent
  return tonumber(string.sub(stored, 1, mantissa_at - 1)) + math.floor(FIXED_WINDOW_EPOCH / window), window,
    tonumber(string.sub(stored, count_at, n - 3))
end

local function fixed_window_value(index, window, count)
  local since = index - math.floor(FIXED_WINDOW_EPOCH / window)
  local mantissa, exponent = window, 0
  while mantissa % 10 == 0 and exponent < 9 do
    mantissa, exponent = mantissa / 10, exponent + 1
  end
  mantissa = string.format('%d', mantissa)
  local digits = string.format('%d', count)
  if since >= 1 and #mantissa <= 9 and #digits <= 9 then
    return string.format('%d%s%s%d%d%d', since, mantissa, digits, #mantissa, exponent, #digits)
  end
  return string.format('%d:%s:%d', index, digits, window)
end

algorithms['FIXED_WINDOW'] = function(key, limit, window, now, cost)
  local index = math.floor(now / window)

  local count = 0
  local stored = redis.call('GET', key)
  if stored then
    local stored_index, stored_window, stored_count = fixed_window_read(stored)
    if stored_index and stored_window == window then
      -- this window, or one ahead of the clock: keep counting in it
      if stored_index >= index then
        index, count = stored_index, stored_count
      end
    elseif stored_index and (stored_index + 1) * stored_window > index * window then
      -- another length, not over before this window began: restated in this window's terms at once, so
      -- that the old window's end is never read again
      count = math.min(stored_count, limit)
      redis.call('SET', key, fixed_window_value(index, window, count), 'PX', (index + 1) * window - now)
    end
  end
  local until_end = (index + 1) * window - now

  if cost > limit then
    return false, math.max(0, limit - count), until_end, -1
  end
  if count + cost > limit then
    return false, math.max(0, limit - count), until_end, until_end
  end
  return true, limit - count - cost, until_end, 0, function()
    redis.call('SET', key, fixed_window_value(index, window, count + cost), 'PX', until_end)
  end
end

-- Settle (see settle.lua). A refund comes out of the window the reservation was counted in (the one ending
-- at at + reset: the one holding `at`, or one ahead of a clock that had stepped back), while that window is stored in the reservation's length and has not ended: once it has
-- rolled, what the reservation took is gone with it and nothing is given back (a policy change that
-- restated the count in another length leaves nothing to tell the reservation's part by: nothing either).
-- A late charge is counted in the window now counting (the stored one while it has not ended, whatever its
-- length, ahead of the clock included; else this window of the reservation's length), even past the
-- limit: the client is then refused until that window ends, no longer.
settles['FIXED_WINDOW'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  local index, length, count
  local stored = redis.call('GET', key)
  if stored then
    index, length, count = fixed_window_read(stored)
  end
  if actual < reserved then
    if not index or length ~= window or index ~= math.floor((at + reset - 1) / window) or (index + 1) * window <= now then
      return 0
    end
    local back = math.min(reserved - actual, count)
    redis.call('SET', key, fixed_window_value(index, window, count - back), 'PX', (index + 1) * window - now)
    return -back
  end
  local charge = actual - reserved
  if not index or (index + 1) * length <= now then
    index, length, count = math.floor(now / window), window, 0
  end
  redis.call('SET', key, fixed_window_value(index, length, count + charge), 'PX', (index + 1) * length - now)
  return charge
end
