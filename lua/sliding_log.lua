-- Sliding log, ring storage (the default): exact, O(cost + log limit) per decision, 8 bytes per unit
-- of limit. Keeps the times of the last `limit` accepted requests (a request of cost c takes c slots)
-- in one string. A request of cost c is allowed iff the c-th oldest of them has left the window: then
-- at most limit - c accepted requests lie inside it. This decides exactly as the sorted-set log
-- (sliding_log_sorted_set.lua) does while time runs forward.
--
-- Key      bytes 0-7: header, the limit and the slot of the oldest time (two big-endian uint32); then
--          `limit` slots of 8 bytes, each an accepted request's time in ms (big-endian double; 0 =
--          never used). Allocated whole on first use, so memory is exactly 8 + 8 * limit bytes of value
--          whatever the traffic; a new limit starts a new ring. Expires one window after the newest
--          accepted request. A request at time t counts while now - window < t.
-- Returns  allowed, remaining (after this request when allowed), reset (until the oldest request in
--          the window leaves it), retry-after (0 when allowed), record.
algorithms['SLIDING_LOG'] = function(key, limit, window, now, cost)
  local HEADER = 8
  local oldest = 0
  local fresh = true
  local header = redis.call('GETRANGE', key, 0, HEADER - 1)
  if #header == HEADER then
    local stored_limit, stored_oldest = struct.unpack('>I4I4', header)
    if stored_limit == limit then
      oldest, fresh = stored_oldest, false
    end
  end

  local function slot_time(slot)
    if fresh then
      return -math.huge
    end
    local offset = HEADER + 8 * (slot % limit)
    local bytes = redis.call('GETRANGE', key, offset, offset + 7)
    local time = (#bytes == 8) and struct.unpack('>d', bytes) or 0
    -- an unused slot (0) holds no request: older than any window
    return (time == 0) and -math.huge or time
  end

  -- Times rise from the oldest slot on: binary search for the first one still inside the window.
  local low, high = 0, limit
  while low < high do
    local middle = math.floor((low + high) / 2)
    if slot_time(oldest + middle) > now - window then
      high = middle
    else
      low = middle + 1
    end
  end
  local in_window = limit - low
  local first_in_window = (in_window > 0) and slot_time(oldest + low) or now

  if in_window + cost > limit then
    local wait = slot_time(oldest + cost - 1) + window - now
    return false, limit - in_window, first_in_window + window - now, wait
  end
  local reset = ((in_window > 0) and first_in_window or now) + window - now
  return true, limit - in_window - cost, reset, 0, function()
    if fresh then
      redis.call('SET', key, struct.pack('>I4I4', limit, 0) .. string.rep('\0', 8 * limit))
    end
    local stamp = struct.pack('>d', now)
    for i = 0, cost - 1 do
      redis.call('SETRANGE', key, HEADER + 8 * ((oldest + i) % limit), stamp)
    end
    redis.call('SETRANGE', key, 0, struct.pack('>I4I4', limit, (oldest + cost) % limit))
    redis.call('PEXPIRE', key, window)
  end
end
