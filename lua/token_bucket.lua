-- Token bucket as GCRA (generic cell rate algorithm): `limit` requests per `window` sustained, up to
-- `burst` at once (extra = burst). The key holds the theoretical arrival time (TAT): when the bucket
-- would be full again if no more requests came. Cheap at any limit: one small string per client.
--
-- Key      the TAT in ms since the epoch, a decimal keeping fractions (the emission interval
--          window / limit need not be whole milliseconds). Expires when the bucket is full again.
-- Returns  allowed, remaining (requests allowed right now after this one), reset (allowed: until
--          the bucket is full again; denied: as retry-after), retry-after (0 when allowed; -1 when the
--          cost is above the burst: such a request never passes, reset is then until the bucket is full),
--          record.
--
-- The TAT is read as at most now + burst * interval of the current policy, an empty bucket: no state of
-- this policy lies further ahead; a TAT further ahead is rewritten so at once, even when the request is
-- denied (never on a peek, cost 0). So after a change of limit, window or burst (a plan changed, an override began or ended, a
-- config edit) the time owed is paid at the new rate but never exceeds a full refill of the new bucket,
-- and a TAT left ahead by a Redis clock stepping back waits no longer than it would have on the earlier
-- clock. The bucket keeps time owed, not requests: a longer interval counts the same time as fewer.
algorithms['TOKEN_BUCKET'] = function(key, limit, window, now, cost, extra)
  local burst = tonumber(extra)
  local interval = window / limit
  local tat = math.max(tonumber(redis.call('GET', key)) or now, now)
  if tat > now + burst * interval then
    -- written at once on a request, allowed or not, so that the Retry-After given now holds; a peek (cost 0)
    -- reads the same and writes nothing
    tat = now + burst * interval
    if cost > 0 then
      redis.call('SET', key, string.format('%.17g', tat), 'PX', math.ceil(tat - now))
    end
  end

  if cost > burst then
    return false, math.floor((now - (tat - burst * interval)) / interval), math.ceil(tat - now), -1
  end

  local new_tat = tat + cost * interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then
    local wait = math.ceil(allow_at - now)
    return false, math.max(0, math.floor((now - (tat - burst * interval)) / interval)), wait, wait
  end
  local until_full = math.ceil(new_tat - now)
  return true, math.floor((now - allow_at) / interval), until_full, 0, function()
    redis.call('SET', key, string.format('%.17g', new_tat), 'PX', until_full)
  end
end

-- Settle (see settle.lua). A refund moves the TAT back by the part of the refunded units' time that is
-- still owed now. The reservation ended its time at TAT_r (its reset after `at`, replied in whole ms rounded
-- up: TAT_r is taken 1 ms earlier, never later), its refunded units were the last (reserved - actual)
-- intervals of that, and only what lies after now is still owed; a request after TAT_r found the bucket full
-- and the reservation no longer counted at all. So a refund never hands out time the client no longer owed,
-- and falls short of exact by at most 1 ms of refill. A late charge moves the TAT on from now (or from where
-- it is), even past an empty bucket, up to a full refill ahead: decisions read no more than that. Intervals
-- are the reservation's: the bucket keeps time owed, whatever the policy is now.
settles['TOKEN_BUCKET'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  local interval = window / limit
  local tat = tonumber(redis.call('GET', key))
  local moved
  if actual < reserved then
    if not tat then
      return 0
    end
    local owed = math.min((reserved - actual) * interval, math.max(at + reserved * interval, at + reset - 1) - now)
    if owed <= 0 then
      return 0
    end
    moved = math.max(now, tat - owed)
    if moved >= tat then
      return 0
    end
  else
    tat = math.max(tat or now, now)
    moved = math.min(tat + (actual - reserved) * interval, now + tonumber(extra) * interval)
    if moved <= tat then
      return 0
    end
  end
  if moved > now then
    redis.call('SET', key, string.format('%.17g', moved), 'PX', math.ceil(moved - now))
  else
    redis.call('DEL', key)
  end
  -- in whole units, rounded: the reply is integers
  local units = math.floor(math.abs(moved - tat) / interval + 0.5)
  return (moved < tat) and -units or units
end
