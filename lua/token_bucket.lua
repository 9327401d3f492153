-- Token bucket as GCRA (generic cell rate algorithm): `limit` requests per `window` sustained, up to
-- `burst` at once (extra = burst). The key holds the theoretical arrival time (TAT): when the bucket
-- would be full again if no more requests came. Cheap at any limit: one small string per client.
--
-- Key      the TAT in ms since the epoch, a decimal keeping fractions (the emission interval
--          window / limit need not be whole milliseconds). Expires when the bucket is full again.
-- Returns  allowed, remaining (requests allowed right now after this one), reset (allowed: until
--          the bucket is full again; denied: as retry-after), retry-after (0 when allowed), record.
algorithms['TOKEN_BUCKET'] = function(key, limit, window, now, cost, extra)
  local burst = tonumber(extra)
  local interval = window / limit
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then
    tat = now
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
