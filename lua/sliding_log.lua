-- Sliding log, ring storage (the default): exact, O(cost + log n) per decision (amortised: a ring
-- that has to grow or shrink is copied once), where n = accepted requests kept. Keeps the times of the
-- accepted requests still in the window (a request of cost c takes c slots), oldest first, in a ring
-- inside one string. A request of cost c is allowed iff at most limit - c of them lie inside the window.
-- Decides as the sorted-set log (sliding_log_sorted_set.lua) does, whatever the clock does.
--
-- Key      bytes 0-7: header, the slot of the oldest kept time and how many times are kept (two
--          big-endian uint32); then the slots, 8 bytes each, an accepted request's time in ms
--          (big-endian double). The ring's capacity is the string's length: when the kept times fill it,
--          or drop to a quarter of it, they are copied into a ring of twice their number, never past
--          `limit` slots. So a client costs 8 to 32 bytes per request in its window, and at most 8 per
--          unit of limit: a fresh key holds 2 slots. The limit is not stored: a changed limit counts the
--          same history. Expires one window after the newest accepted request. A request at time t
--          counts while now - window < t.
-- Returns  allowed, remaining (after this request when allowed), reset (until the oldest request in
--          the window leaves it; a window when none is in it), retry-after (0 when allowed; -1 when the
--          cost is above the limit: such a request never passes), record.
--
-- Times that have left the window are dropped when a request is accepted, never on a denial: a flood
-- over the limit writes nothing. A request is logged no earlier than the newest logged one, so the
-- ring stays in time order when the Redis clock steps back (failover to a lagging replica); such a
-- request then counts a little longer than a minute, never shorter.
algorithms['SLIDING_LOG'] = function(key, limit, window, now, cost)
  local HEADER = 8
  local oldest, kept, capacity = 0, 0, 0
  local header = redis.call('GETRANGE', key, 0, HEADER - 1)
  if #header == HEADER then
    oldest, kept = struct.unpack('>I4I4', header)
    capacity = (redis.call('STRLEN', key) - HEADER) / 8
  end

  local function offset(i)
    return HEADER + 8 * ((oldest + i) % capacity)
  end
  -- the i-th kept time, 0 = the oldest
  local function time_of(i)
    local at = offset(i)
    return (struct.unpack('>d', redis.call('GETRANGE', key, at, at + 7)))
  end

  -- Kept times rise from the oldest on: binary search for the first one still inside the window.
  local low, high = 0, kept
  while low < high do
    local middle = math.floor((low + high) / 2)
    if time_of(middle) > now - window then
      high = middle
    else
      low = middle + 1
    end
  end
  local in_window = kept - low

  if cost > limit then
    return false, math.max(0, limit - in_window), ((in_window > 0) and time_of(low) or now) + window - now, -1
  end
  if in_window + cost > limit then
    -- Allowed once all but limit - cost of them have left: wait for number in_window + cost - limit.
    local wait = time_of(low + in_window + cost - limit - 1) + window - now
    return false, math.max(0, limit - in_window), time_of(low) + window - now, wait
  end
  local reset = ((in_window > 0) and time_of(low) or now) + window - now
  return true, limit - in_window - cost, reset, 0, function()
    local stamp = now
    if kept > 0 then
      stamp = math.max(now, time_of(kept - 1))
    end
    local stamps = string.rep(struct.pack('>d', stamp), cost)
    local count = in_window + cost
    if count > capacity or 4 * count <= capacity or capacity > limit then
      -- Copy the times still in the window into a ring of twice what is needed (at most `limit`):
      -- SET allocates exactly that, where APPEND or SETRANGE past the end would let Redis
      -- over-allocate up to double.
      local live = ''
      if in_window > 0 then
        local first, last = offset(low), offset(kept - 1)
        if first <= last then
          live = redis.call('GETRANGE', key, first, last + 7)
        else
          live = redis.call('GETRANGE', key, first, -1) .. redis.call('GETRANGE', key, HEADER, last + 7)
        end
      end
      local size = math.min(limit, 2 * count)
      redis.call('SET', key, struct.pack('>I4I4', 0, count) .. live .. stamps .. string.rep('\0', 8 * (size - count)))
    else
      oldest = (oldest + low) % capacity
      local at = offset(in_window)
      if at + 8 * cost <= HEADER + 8 * capacity then
        redis.call('SETRANGE', key, at, stamps)
      else
        for i = 0, cost - 1 do
          redis.call('SETRANGE', key, offset(in_window + i), struct.pack('>d', stamp))
        end
      end
      redis.call('SETRANGE', key, 0, struct.pack('>I4I4', oldest, count))
    end
    redis.call('PEXPIRE', key, stamp + window - now)
  end
end

-- Settle (see settle.lua). A refund removes the reservation's times while they are inside the window: times
-- logged at `at` exactly (those of other requests in the same millisecond are the same time, so any of them
-- will do), the times after them moved down one place each so the ring stays in time order. Once they have
-- left the window there is nothing to give back. A reservation logged later than `at` (only when the Redis
-- clock had stepped back below a logged time) is not found: nothing is given back, never another request's. A late charge logs the extra
-- units now (no earlier than the newest time), even past the limit, at most `limit` of them: `limit` times
-- at one instant already refuse every request until they leave, so more would decide nothing differently
-- and only cost memory. The client is then refused until they leave the window, no longer.
settles['SLIDING_LOG'] = function(key, limit, window, now, at, reserved, actual)
  local HEADER = 8
  local oldest, kept, capacity = 0, 0, 0
  local header = redis.call('GETRANGE', key, 0, HEADER - 1)
  if #header == HEADER then
    oldest, kept = struct.unpack('>I4I4', header)
    capacity = (redis.call('STRLEN', key) - HEADER) / 8
  end

  local function offset(i)
    return HEADER + 8 * ((oldest + i) % capacity)
  end
  local function time_of(i)
    local at_ = offset(i)
    return (struct.unpack('>d', redis.call('GETRANGE', key, at_, at_ + 7)))
  end
  -- the first of the kept times (which rise) that is `after`, or kept when none is
  local function first(after)
    local low, high = 0, kept
    while low < high do
      local middle = math.floor((low + high) / 2)
      if after(time_of(middle)) then
        high = middle
      else
        low = middle + 1
      end
    end
    return low
  end
  -- the bytes of n kept slots from the i-th on (the ring may wrap)
  local function slots(i, n)
    if n <= 0 then
      return ''
    end
    local from, to = offset(i), offset(i + n - 1)
    if from <= to then
      return redis.call('GETRANGE', key, from, to + 7)
    end
    return redis.call('GETRANGE', key, from, -1) .. redis.call('GETRANGE', key, HEADER, to + 7)
  end
  -- writes whole slots from the i-th kept one on
  local function write(i, bytes)
    if #bytes == 0 then
      return
    end
    local from = offset(i)
    local room = HEADER + 8 * capacity - from
    if #bytes <= room then
      redis.call('SETRANGE', key, from, bytes)
    else
      redis.call('SETRANGE', key, from, string.sub(bytes, 1, room))
      redis.call('SETRANGE', key, HEADER, string.sub(bytes, room + 1))
    end
  end

  if actual < reserved then
    if at <= now - window then
      return 0
    end
    local p = first(function(t)
      return t >= at
    end)
    local after = first(function(t)
      return t > at
    end)
    local back = math.min(reserved - actual, after - p)
    if back <= 0 then
      return 0
    end
    write(p, slots(p + back, kept - p - back))
    redis.call('SETRANGE', key, 0, struct.pack('>I4I4', oldest, kept - back))
    return -back
  end

  local add = math.min(actual - reserved, limit)
  local low = first(function(t)
    return t > now - window
  end)
  local in_window = kept - low
  local stamp = now
  if kept > 0 then
    stamp = math.max(now, time_of(kept - 1))
  end
  local stamps = string.rep(struct.pack('>d', stamp), add)
  local count = in_window + add
  if count > capacity then
    local size = math.max(count, math.min(limit, 2 * count))
    redis.call('SET', key, struct.pack('>I4I4', 0, count) .. slots(low, in_window) .. stamps
      .. string.rep('\0', 8 * (size - count)))
  else
    oldest = (oldest + low) % capacity
    write(in_window, stamps)
    redis.call('SETRANGE', key, 0, struct.pack('>I4I4', oldest, count))
  end
  redis.call('PEXPIRE', key, stamp + window - now)
  return add
end
