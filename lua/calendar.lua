-- Calendar quota: a fixed window whose periods are local days, weeks or months of a time zone. Zone
-- rules live in Java, which sends (extra) the edges around its own now:
--   "<previous start>,<start>,<end>,<next end>"  (ms since the epoch)
-- three periods, each as long as the calendar makes it (a day of 23 or 25 hours, a month of 28 to 31
-- days). The period holding Redis's now among them counts, so the decision keeps Redis's clock and
-- gateway clocks may be off by up to a period either way. Redis's now before the first edge: the
-- first period (a gateway a period ahead); after the last: periods as long as the last one sent
-- (a gateway a period behind, which should never be).
--
-- Key      "c:<period start>:<period end>:<count>", the same key as the fixed window (a change between a
--          rolling window and a calendar keeps what was used; after one, several windows, see fixed_window.lua).
--          Expires when its period ends (the last window held ends).
-- Returns  as the fixed window: allowed, remaining, reset = until the period ends, retry-after = until the
--          period ends (0 when allowed, -1 when the cost is above the limit), record.
--
-- A stored period of these edges counts; one ahead of Redis's now (its clock stepped back across an edge)
-- keeps counting until it ends, as the fixed window's does. A change between policies (a rolling fixed
-- window, a calendar of another zone or unit) keeps what the client used under both, as the fixed window
-- does (see fixed_window.lua): the key holds this period and the other policies' windows that have not
-- ended; the current period starts, after a change, from the most any of them counted that had not ended
-- before it began, at most the limit, written at once on a request (never on a peek); a recorded request
-- counts in every window held.

-- The edges Java sent, and the period among them that holds now.
local function calendar_period(extra, now)
  local edges = {}
  for edge in string.gmatch(extra, '%d+') do
    edges[#edges + 1] = tonumber(edge)
  end
  if now < edges[2] then
    return edges, edges[1], edges[2]
  elseif now < edges[3] then
    return edges, edges[2], edges[3]
  end
  local length = edges[4] - edges[3]
  local skipped = math.max(0, math.floor((now - edges[4]) / length) + 1)
  return edges, edges[3] + skipped * length, edges[4] + skipped * length
end

algorithms['FIXED_WINDOW_CALENDAR'] = function(key, limit, window, now, cost, extra)
  local edges, start, finish = calendar_period(extra, now)
  -- a period of these edges (the previous one too: rolled, not another policy)
  local function ours(part)
    return not part.length and ((part.start == edges[1] and part.finish == edges[2])
      or (part.start == edges[2] and part.finish == edges[3]) or (part.start == edges[3] and part.finish == edges[4])
      or (part.start == start and part.finish == finish))
  end
  local mine, kept, restated = windows_state(redis.call('GET', key), {start = start, finish = finish}, ours, limit, now)
  if restated and cost > 0 then
    windows_write(key, mine, kept, 0, now)
  end
  return window_verdict(mine.count, limit, cost, math.max(1, mine.finish - now), function()
    windows_write(key, mine, kept, cost, now)
  end)
end

-- Settle (see settle.lua). As the fixed window: a refund comes out of the period the reservation was
-- counted in (the one ending at at + reset) while that period is stored and has not ended; a late charge
-- is counted in the stored period while it has not ended, else in the period holding now, even past the
-- limit: the client is then refused until that period ends, no longer. Windows kept from other policies
-- give back and are charged as the fixed window's are.
settles['FIXED_WINDOW_CALENDAR'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  local stored = redis.call('GET', key)
  local parts = stored and windows_read(stored) or {}
  local first, kept = parts[1], {}
  for i = 2, #parts do
    if parts[i].finish > now then
      kept[#kept + 1] = parts[i]
    end
  end
  if actual < reserved then
    return windows_refund(key, first, kept, function(part)
      return not part.length and part.finish == at + reset
    end, reserved - actual, now)
  end
  local charge = actual - reserved
  if not first or first.finish <= now then
    local _, start, finish = calendar_period(extra, now)
    first = {start = start, finish = finish, count = 0}
  end
  windows_write(key, first, kept, charge, now)
  return charge
end
