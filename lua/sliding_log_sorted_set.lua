-- Sliding log, sorted-set storage: exact. One sorted-set entry per accepted unit of cost within the
-- last window; operators can read it with ZRANGE. The ring storage (sliding_log.lua) is smaller.
--
-- Key      score = time of an accepted request in ms, member unique per entry. Expires one window
--          after the newest accepted request. A request at time t counts while now - window < t.
-- Returns  allowed, remaining (after this request when allowed), reset (until the oldest entry in the
--          window leaves it; a window when none is in it), retry-after (0 when allowed; -1 when the cost
--          is above the limit: such a request never passes), record.
--
-- As in the ring: entries that have left the window are dropped when a request is accepted, not on a
-- denial, and a request is logged no earlier than the newest entry (the Redis clock may step back
-- after a failover), so both storages keep the same entries and decide alike whatever the clock does.
algorithms['SLIDING_LOG_SORTED_SET'] = function(key, limit, window, now, cost)
  local after = '(' .. string.format('%d', now - window)
  local count = redis.call('ZCOUNT', key, after, '+inf')

  -- the i-th entry in the window, 0 = the oldest (by score, without counting what lies before it)
  local function time_of(index)
    return tonumber(redis.call('ZRANGE', key, after, '+inf', 'BYSCORE', 'LIMIT', index, 1, 'WITHSCORES')[2])
  end

  if cost > limit then
    return false, math.max(0, limit - count), ((count > 0) and time_of(0) or now) + window - now, -1
  end
  if count + cost > limit then
    -- Allowed once all but limit - cost entries have left: wait for entry number count + cost - limit.
    local wait = time_of(count + cost - limit - 1) + window - now
    return false, math.max(0, limit - count), time_of(0) + window - now, wait
  end
  local reset = ((count > 0) and time_of(0) or now) + window - now
  return true, limit - count - cost, reset, 0, function()
    local stamp = now
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
    if newest then
      stamp = math.max(now, tonumber(newest))
    end
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    -- Members only need to be unique: the time, with a sequence number when they share a millisecond.
    local sequence = count
    for _ = 1, cost do
      local member = string.format('%d', stamp)
      while redis.call('ZADD', key, 'NX', stamp, member) == 0 do
        sequence = sequence + 1
        member = string.format('%d-%d', stamp, sequence)
      end
    end
    redis.call('PEXPIRE', key, stamp + window - now)
  end
end

-- Settle (see settle.lua). As the ring does: a refund removes entries logged at `at` exactly while they are
-- inside the window; a late charge logs at most `limit` entries now (no earlier than the newest), even past
-- the limit.
settles['SLIDING_LOG_SORTED_SET'] = function(key, limit, window, now, at, reserved, actual)
  if actual < reserved then
    if at <= now - window then
      return 0
    end
    local stamp = string.format('%d', at)
    local members = redis.call('ZRANGE', key, stamp, stamp, 'BYSCORE', 'LIMIT', 0, reserved - actual)
    -- in slices: unpack is bounded by Lua's stack
    for i = 1, #members, 1000 do
      redis.call('ZREM', key, unpack(members, i, math.min(i + 999, #members)))
    end
    return -#members
  end
  local add = math.min(actual - reserved, limit)
  local stamp = now
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
  if newest then
    stamp = math.max(now, tonumber(newest))
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local sequence = redis.call('ZCARD', key)
  for _ = 1, add do
    local member = string.format('%d', stamp)
    while redis.call('ZADD', key, 'NX', stamp, member) == 0 do
      sequence = sequence + 1
      member = string.format('%d-%d', stamp, sequence)
    end
  end
  redis.call('PEXPIRE', key, stamp + window - now)
  return add
end
