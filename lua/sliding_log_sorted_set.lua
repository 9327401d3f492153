-- Sliding log, sorted-set storage: exact. One sorted-set entry per accepted unit of cost within the
-- last window; operators can read it with ZRANGE. The ring storage (sliding_log.lua) is smaller.
--
-- Key      score = time of an accepted request in ms, member unique per entry. Expires one window
--          after the newest accepted request. A request at time t counts while now - window < t.
-- Returns  allowed, remaining (after this request when allowed), reset (until the oldest entry in the
--          window leaves it), retry-after (0 when allowed), record.
--
-- Entries that have left the window are dropped whatever the decision: they no longer count.
algorithms['SLIDING_LOG_SORTED_SET'] = function(key, limit, window, now, cost)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)

  local function time_of(index)
    return tonumber(redis.call('ZRANGE', key, index, index, 'WITHSCORES')[2])
  end

  if count + cost > limit then
    -- Allowed once all but limit - cost entries have left: wait for entry number count + cost - limit.
    local wait = time_of(count + cost - limit - 1) + window - now
    return false, math.max(0, limit - count), time_of(0) + window - now, wait
  end
  local reset = ((count > 0) and time_of(0) or now) + window - now
  return true, limit - count - cost, reset, 0, function()
    -- Members only need to be unique: the time, with a sequence number when they share a millisecond.
    local sequence = count
    for _ = 1, cost do
      local member = string.format('%d', now)
      while redis.call('ZADD', key, 'NX', now, member) == 0 do
        sequence = sequence + 1
        member = string.format('%d-%d', now, sequence)
      end
    end
    redis.call('PEXPIRE', key, window)
  end
end
