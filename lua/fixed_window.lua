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
-- until it ends. A changed limit applies at once to the same count.
--
-- A change of window (a plan changed, an override began or ended, a config edit; or a calendar quota's
-- period, see calendar.lua) keeps what the client used, under both policies:
-- - The key then holds several windows, ";"-separated, each in one of the layouts above (or a calendar
--   period's): first the window of the policy that wrote last, then the windows of other policies that
--   have not ended (at most two, the latest-ending kept), so that what a longer window counted is there
--   again when its policy comes back. The key expires when the last of them ends.
-- - A decision counts in this policy's own window (the current one, or one ahead of the clock) where the
--   key holds it, kept or first. Where it does not and the first window is another policy's (the policy
--   has just changed), the current window starts from the most any stored window counted that had not
--   ended before it began, at most the limit (a count this policy could have reached): no fresh quota,
--   and refused at most until this window ends. Written at once on a request (even a denied one, so that
--   its Retry-After holds), never on a peek (cost 0), which reads the same and writes nothing.
-- - A recorded request counts in every window the key holds: the one deciding and each kept one. So when
--   an override of an hour ends into the route's day, the day holds what the client used before and during
--   the hour.
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

-- A calendar quota's value (see calendar.lua): its period's start and end and its count, or nil.
local function calendar_read(stored)
  local start, finish, count = string.match(stored, '^c:(%d+):(%d+):(%d+)$')
  if start then
    return tonumber(start), tonumber(finish), tonumber(count)
  end
  return nil
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

local function calendar_value(start, finish, count)
  return string.format('c:%d:%d:%d', start, finish, count)
end

-- The windows a stored value holds, in order, each {start, finish, count} and, for a rolling window, its
-- index and length (a calendar period has none); parts of no known layout are left out.
local function windows_read(stored)
  local parts = {}
  for text in string.gmatch(stored, '[^;]+') do
    local start, finish, count = calendar_read(text)
    if start then
      parts[#parts + 1] = {start = start, finish = finish, count = count}
    else
      local index, length
      index, length, count = fixed_window_read(text)
      if index then
        parts[#parts + 1] = {start = index * length, finish = (index + 1) * length, count = count, index = index,
          length = length}
      end
    end
  end
  return parts
end

local function window_text(part)
  if part.length then
    return fixed_window_value(part.index, part.length, part.count)
  end
  return calendar_value(part.start, part.finish, part.count)
end

-- The window counting now under a policy whose current window is `current` ({start, finish, and index and
-- length for a rolling window}; ours(part) tells a window of this policy), the other policies' windows kept
-- (not ended, at most two), and whether the counting window was restated from another policy's (see above).
local function windows_state(stored, current, ours, limit, now)
  local parts = stored and windows_read(stored) or {}
  local mine
  for _, part in ipairs(parts) do
    if ours(part) and part.start >= current.start and (not mine or part.start > mine.start) then
      mine = part
    end
  end
  local restated = false
  if not mine then
    mine = {start = current.start, finish = current.finish, count = 0, index = current.index, length = current.length}
    if parts[1] and not ours(parts[1]) then
      -- the policy changed: what the other windows counted stays used, at most this policy's limit
      local carried = 0
      for _, part in ipairs(parts) do
        if part.finish > current.start then
          carried = math.max(carried, part.count)
        end
      end
      mine.count, restated = math.min(carried, limit), true
    end
  end
  local kept = {}
  for _, part in ipairs(parts) do
    if part ~= mine and not ours(part) and part.finish > now then
      kept[#kept + 1] = part
    end
  end
  if #kept > 2 then
    table.sort(kept, function(a, b) return a.finish > b.finish end)
    kept = {kept[1], kept[2]}
  end
  return mine, kept, restated
end

-- Adds `added` to the counting window and to every kept one, and writes them (the counting one first),
-- expiring when the last ends.
local function windows_write(key, mine, kept, added, now)
  mine.count = mine.count + added
  local texts, finish = {window_text(mine)}, mine.finish
  for _, part in ipairs(kept) do
    part.count = part.count + added
    texts[#texts + 1] = window_text(part)
    finish = math.max(finish, part.finish)
  end
  redis.call('SET', key, table.concat(texts, ';'), 'PX', math.max(1, finish - now))
end

-- The answer of a window holding `count` of `limit` that ends in `until_end` ms, to a request of `cost` (the fixed
-- window's and the calendar quota's): refused for good when the cost is above the limit, until the window ends when
-- it does not fit now, else allowed, with `record` to count it.
local function window_verdict(count, limit, cost, until_end, record)
  if cost > limit then
    return false, math.max(0, limit - count), until_end, -1
  end
  if count + cost > limit then
    return false, math.max(0, limit - count), until_end, until_end
  end
  return true, limit - count - cost, until_end, 0, record
end

-- The general check: a key holding any layout, or several windows after a change of policy (see above).
local function fixed_window_check(key, limit, window, now, cost, stored)
  local index = math.floor(now / window)
  local mine, kept, restated = windows_state(stored,
    {start = index * window, finish = (index + 1) * window, index = index, length = window},
    function(part) return part.length == window end, limit, now)
  if restated and cost > 0 then
    windows_write(key, mine, kept, 0, now)
  end
  return window_verdict(mine.count, limit, cost, mine.finish - now, function()
    windows_write(key, mine, kept, cost, now)
  end)
end

-- The compact layout's index, length and count by arithmetic, for a value of at most 15 digits (exact in a
-- double): string.sub's five new strings cost Redis more than the rest of such a decision. Else nil.
local function fixed_window_digits(stored)
  if #stored > 15 or #stored < 6 or string.find(stored, '%D') then
    return nil
  end
  local value = tonumber(stored)
  local width = value % 10
  value = (value - width) / 10
  local exponent = value % 10
  value = (value - exponent) / 10
  local digits = value % 10
  value = (value - digits) / 10
  local count = value % 10 ^ width
  value = (value - count) / 10 ^ width
  local mantissa = value % 10 ^ digits
  local since = (value - mantissa) / 10 ^ digits
  if width < 1 or digits < 1 or since < 1 then
    return nil
  end
  local window = mantissa * 10 ^ exponent
  return since + math.floor(FIXED_WINDOW_EPOCH / window), window, count
end

-- The check of a key holding only its own policy's window in the compact layout (a client whose policy has not
-- changed), or nothing (a new client): straight-line, without the general check's tables; every other value goes
-- to the general check, which answers and writes alike for such a key.
algorithms['FIXED_WINDOW'] = function(key, limit, window, now, cost)
  local stored = redis.call('GET', key)
  local index, count = math.floor(now / window), 0
  if stored then
    local at, length, counted = fixed_window_digits(stored)
    if not at or length ~= window then
      return fixed_window_check(key, limit, window, now, cost, stored)
    end
    -- this policy's window: the current one, or one ahead of the clock; an ended one counts nothing
    if at >= index then
      index, count = at, counted
    end
  end
  local until_end = (index + 1) * window - now
  return window_verdict(count, limit, cost, until_end, function()
    redis.call('SET', key, fixed_window_value(index, window, count + cost), 'PX', math.max(1, until_end))
  end)
end

-- Settle (see settle.lua). A refund comes out of the window the reservation was counted in (the one ending
-- at at + reset: the one holding `at`, or one ahead of a clock that had stepped back), while that window is
-- stored in the reservation's length and has not ended, first or kept from another policy (an override with
-- another window that decided a request since wrote its own window first): once it has rolled, what the
-- reservation took is gone with it and nothing is given back.
-- A late charge is counted in the window now counting (the stored one while it has not ended, whatever its
-- length, ahead of the clock included; else this window of the reservation's length), even past the
-- limit: the client is then refused until that window ends, no longer. Windows kept from other policies
-- (see above) counted the reservation too: a refund comes out of each (at most what it holds), a late charge
-- is added to each.
-- A refund of `wanted` out of the window the reservation was counted in (the first part `counted` tells, the
-- stored first one or one kept from another policy), and out of every other window the key holds, each at most
-- what it holds: they all counted the reservation (a kept window with it; a window of a policy that came since
-- restated from it). The window may be a kept one: an override with another window, deciding a request, wrote
-- its own window first, and the reservation's policy may come back. Nothing when no window tells the
-- reservation's part (its window rolled, or was never stored in the reservation's terms).
local function windows_refund(key, first, kept, counted, wanted, now)
  local found
  if first and counted(first) and first.finish > now then
    found = first
  end
  for _, part in ipairs(kept) do
    if not found and counted(part) then
      found = part
    end
  end
  if not found then
    return 0
  end
  local back = math.min(wanted, found.count)
  if found == first then
    first.count = first.count - back
  else
    -- the first window restated the reservation's (at most its own limit) and counted what came since as the
    -- reservation's did: it gives back what the restatement took of the refund, not more (no fresh quota)
    first.count = first.count - math.min(first.count, math.max(0, back - math.max(0, found.count - first.count)))
  end
  for _, part in ipairs(kept) do
    part.count = part.count - math.min(back, part.count)
  end
  windows_write(key, first, kept, 0, now)
  return -back
end

settles['FIXED_WINDOW'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  local stored = redis.call('GET', key)
  local parts = stored and windows_read(stored) or {}
  local first, kept = parts[1], {}
  for i = 2, #parts do
    if parts[i].finish > now then
      kept[#kept + 1] = parts[i]
    end
  end
  if actual < reserved then
    local index = math.floor((at + reset - 1) / window)
    return windows_refund(key, first, kept, function(part)
      return part.length == window and part.index == index
    end, reserved - actual, now)
  end
  local charge = actual - reserved
  if not first or first.finish <= now then
    local index = math.floor(now / window)
    first = {start = index * window, finish = (index + 1) * window, count = 0, index = index, length = window}
  end
  windows_write(key, first, kept, charge, now)
  return charge
end
