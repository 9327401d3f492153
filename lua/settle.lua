-- Settles one reservation once: a request whose cost decide.lua reserved in every limit of its route
-- turned out to cost `actual`; each limit gives back what it still holds of the difference (a refund) or
-- counts the rest now (a late charge, even past the limit). Assembled at start-up after the same
-- modules as decide.lua (see LimitScript), each defining in the table `settles`:
--
--   settles[name] = function(key, limit, window, now, at, reserved, actual, extra)
--     -> units given back (negative) or charged (positive) by this limit
--
-- Idempotent: the first call sets the reservation's marker key (SET NX), and a call that finds it set
-- changes nothing. The marker lives as long as the longest horizon of the reservation's limits (a
-- window; a token bucket's full refill when longer), after which a refund finds nothing left to give
-- back in any limit.
--
-- KEYS[i]    the client's key for limit i, as reserved (all share one hash tag)
-- KEYS[n+1]  the reservation's marker, under the same hash tag
-- ARGV[1]    now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- ARGV[2]    when the reservation was made: the `now` decide.lua replied with
-- ARGV[3]    the cost reserved, >= 1
-- ARGV[4]    the actual cost, >= 0 and not the cost reserved
-- ARGV[5 + 4(i-1) ..]  for limit i, as reserved: algorithm name, limit, window in ms, extra ("" when none)
-- ARGV[5 + 4n + 2(i-1) ..]  optional, after the n limits: reserved and actual of limit i when limits
--            differ (tokens in token limits, 1 in request limits); a limit whose two are equal is left as
--            it is (0); absent: ARGV[3] and ARGV[4] for all
-- Reply      {1, then for each limit the units given back (< 0) or charged (> 0)}, or {0} when the
--            reservation was settled before
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local at, reserved, actual = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

local limits = #KEYS - 1
local horizon = 1
for i = 1, limits do
  local base = 5 + 4 * (i - 1)
  local limit, window = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  horizon = math.max(horizon, window)
  if ARGV[base] == 'TOKEN_BUCKET' then
    horizon = math.max(horizon, math.ceil(tonumber(ARGV[base + 3]) * window / limit))
  end
end
if not redis.call('SET', KEYS[limits + 1], '1', 'NX', 'PX', horizon) then
  return {0}
end

local reply = {1}
local own = 5 + 4 * limits
for i = 1, limits do
  local base = 5 + 4 * (i - 1)
  local r, a = reserved, actual
  if ARGV[own + 2 * (i - 1)] then
    r, a = tonumber(ARGV[own + 2 * (i - 1)]), tonumber(ARGV[own + 2 * (i - 1) + 1])
  end
  if r == a then
    reply[i + 1] = 0
  else
    reply[i + 1] = settles[ARGV[base]](KEYS[i], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), now, at,
      r, a, ARGV[base + 3])
  end
end
return reply
