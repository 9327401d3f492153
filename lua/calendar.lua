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
--          rolling window and a calendar keeps what was used). Expires when its period ends.
-- Returns  as the fixed window: allowed, remaining, reset = until the period ends, retry-after = until the
--          period ends (0 when allowed, -1 when the cost is above the limit), record.
--
-- A stored period of these edges counts; one ahead of Redis's now (its clock stepped back across an edge)
-- keeps counting until it ends, as the fixed window's does. Anything else stored (a rolling fixed window, a
-- calendar of another zone or unit) that has not ended before the current period began stays used in it:
-- at most the limit, written in the current period's terms at once, even when denied. One that ended
-- before reads as zero.
local function calendar_value(start, finish, count)
  return string.format('c:%d:%d:%d', start, finish, count)
end

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

  local count = 0
  local stored = redis.call('GET', key)
  if stored then
    local stored_start, stored_end, stored_count = calendar_read(stored)
    local same = false
    if stored_start then
      -- this period, or a later one of the same edges (Redis's clock stepped back): keep counting in it
      same = stored_start >= start and ((stored_start == edges[2] and stored_end == edges[3])
        or (stored_start == edges[3] and stored_end == edges[4]) or (stored_start == start and stored_end == finish))
    else
      local index, length
      index, length, stored_count = fixed_window_read(stored)
      if index then
        stored_end = (index + 1) * length
      end
    end
    if same then
      start, finish, count = stored_start, stored_end, stored_count
    elseif stored_end and stored_end > start then
      -- another policy's window, not over before this period began: what it counted stays used here
      count = math.min(stored_count, limit)
      redis.call('SET', key, calendar_value(start, finish, count), 'PX', math.max(1, finish - now))
    end
  end
  local until_end = math.max(1, finish - now)

  if cost > limit then
    return false, math.max(0, limit - count), until_end, -1
  end
  if count + cost > limit then
    return false, math.max(0, limit - count), until_end, until_end
  end
  return true, limit - count - cost, until_end, 0, function()
    redis.call('SET', key, calendar_value(start, finish, count + cost), 'PX', until_end)
  end
end

-- Settle (see settle.lua). As the fixed window: a refund comes out of the period the reservation was
-- counted in (the one ending at at + reset) while that period is stored and has not ended; a late charge
-- is counted in the stored period while it has not ended, else in the period holding now, even past the
-- limit: the client is then refused until that period ends, no longer.
settles['FIXED_WINDOW_CALENDAR'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  local start, finish, count
  local stored = redis.call('GET', key)
  if stored then
    start, finish, count = calendar_read(stored)
  end
  if actual < reserved then
    if not start or finish ~= at + reset or finish <= now then
      return 0
    end
    local back = math.min(reserved - actual, count)
    redis.call('SET', key, calendar_value(start, finish, count - back), 'PX', finish - now)
    return -back
  end
  local charge = actual - reserved
  if not start or finish <= now then
    local _
    _, start, finish = calendar_period(extra, now)
    count = 0
  end
  redis.call('SET', key, calendar_value(start, finish, count + charge), 'PX', math.max(1, finish - now))
  return charge
end
