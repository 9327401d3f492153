-- Concurrency: at most `limit` requests of a client in flight at once, across every gateway instance. One
-- sorted set per client whose members are the ids of its requests in flight (unique per request, made by
-- the gateway: extra), each scored by when its slot expires: now + window. The gateway releases a slot when
-- the response ends (release.lua); `window` is the longest a slot is held when no release comes (the
-- instance holding it died), so a crashed instance locks a client out for at most one window.
--
-- Key      sorted set: request id -> expiry in ms since the epoch. Its TTL follows the latest expiry, and
--          Redis deletes it when its last slot is released, so fresh clients leave nothing behind.
-- Cost     a request takes one slot whatever its cost (tokens, a cost header): any cost above 0 is 1;
--          a cost of 0 reads (the endpoint's peek) and takes nothing.
-- Returns  allowed, remaining (slots left after this request), reset (until the oldest slot held expires at
--          the latest: a slot frees by then, usually far sooner, when a response ends), retry-after (0 when
--          allowed; when refused at most 1 s, as no one knows when the next response ends), record.
algorithms['CONCURRENCY'] = function(key, limit, window, now, cost, extra)
  -- slots past their expiry are gone: their holder died without releasing them
  local held = redis.call('ZCOUNT', key, '(' .. now, '+inf')
  local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  local reset = oldest[2] and (tonumber(oldest[2]) - now) or 0
  if cost == 0 then
    return held < limit, math.max(0, limit - held), reset, 0, function() end
  end
  if held >= limit then
    return false, 0, reset, math.max(1, math.min(1000, reset))
  end
  if extra == nil or extra == '' then
    error('a concurrency limit needs the request id as its extra argument')
  end
  if held == 0 then
    reset = window
  end
  return true, limit - held - 1, reset, 0, function()
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    redis.call('ZADD', key, now + window, extra)
    if redis.call('PTTL', key) < window then
      redis.call('PEXPIRE', key, window)
    end
  end
end

-- Settle (see settle.lua). A slot is one request whatever the request cost: nothing to refund or charge.
-- It is given back by release.lua when the response ends, settled or not.
settles['CONCURRENCY'] = function(key, limit, window, now, at, reserved, actual, extra, reset)
  return 0
end
