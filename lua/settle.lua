-- Settles one reservation once: a request whose cost decide.lua reserved in every limit of its route
-- turned out to cost `actual`; each limit gives back what it still holds of the difference (a refund) or
-- counts the rest now (a late charge, even past the limit). Assembled at start-up after the same
-- modules as decide.lua (see LimitScript), each defining in the table `settles`:
--
--   settles[name] = function(key, limit, window, now, at, reserved, actual, extra, reset)
--     -> units given back (negative) or charged (positive) by this limit
--
-- where `reset` is what decide.lua replied as this limit's reset when it reserved (ms after `at`): where the
-- reservation landed, in the algorithm's terms (the end of the window it was counted in; the time the bucket
-- would be full again after it).
--
-- Idempotent: the first call adds the reservation's id to the client's markers (a hash, HSETNX), and a call
-- that finds it there changes nothing. A second call is Lettuce sending the same command again after a
-- reconnect, which it does only until the guard gives the call up (redis-timeout: it writes no cancelled
-- command, and cancels a merged one when every settle in it was given up), or the gateway's one second send of
-- a settle Redis could not take, once Redis answers again: the same command, within 50 s of the first send when
-- that one may have been written (RateLimiterCore.SETTLE_SENT_AGAIN_WITHIN). So a marker need live under a
-- minute from the run that wrote it; the hash lives a
-- minute after each settle written to it, and the gateway names one hash per client and minute of its own
-- clock (a re-sent command names the same), so a client's hash holds at most its settles of about two
-- minutes. One field in a hash the client has already costs Redis less, in time and memory, than a key with
-- its own expiry per settle.
--
-- Several reservations may be settled in one call (the gateway merges the settles it sends in one write to a
-- Redis that is not a cluster, see ScriptSender): KEYS and ARGV hold one segment per reservation, in order.
--
-- KEYS, per reservation with n limits:
--   its key for each limit, as reserved (all share one hash tag), then its client's settle markers of the
--   gateway's current minute (a hash), then its client's resets hash (reset.lua), under the same hash tag
-- ARGV, per reservation (6 + 5n values):
--   now in ms since the epoch, or "" to use the Redis server's clock (TIME)
--   n, the number of its limits
--   when the reservation was made: the `now` decide.lua replied with
--   the cost reserved, >= 1; or, when limits were reserved different costs (an LLM route's token and request
--   limits), one per limit, comma separated
--   the actual cost, >= 0 and not the cost reserved; or one per limit, comma separated (a limit whose two are
--   equal is left as it is: 0)
--   for each limit, as reserved: algorithm name, limit, window in ms, extra ("" when none), the reset
--   decide.lua replied for it
--   the reservation's id: its field in the markers
-- A limit whose key an operator reset (reset.lua) at or after the reservation's `at` is left as it is: what the
-- reservation held went with the reset, and the counts there now are the client's since.
-- Reply      per reservation n + 2 numbers (one per key): {1, then for each limit the units given back (< 0) or
--            charged (> 0), then how many limits were left alone for a reset after the reservation}, or {0, then
--            n + 1 zeros} when the reservation was settled before
local clock
local function now_of(text)
  local now = tonumber(text)
  if now then
    return now
  end
  if not clock then
    local time = redis.call('TIME')
    clock = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return clock
end

-- limit i's cost: the one number, or the i-th of the list
local function each(text)
  local one = tonumber(text)
  local costs = {}
  if not one then
    for cost in string.gmatch(text, '%d+') do
      costs[#costs + 1] = tonumber(cost)
    end
  end
  return function(i) return one or costs[i] end
end

local reply, k, a = {}, 0, 1
while a <= #ARGV do
  local now, limits, at = now_of(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local reserved, actual = each(ARGV[a + 3]), each(ARGV[a + 4])
  local markers, resets, first = KEYS[k + limits + 1], KEYS[k + limits + 2], #reply + 1
  if redis.call('HSETNX', markers, ARGV[a + 5 + 5 * limits], '1') == 0 then
    for i = 0, limits + 1 do
      reply[first + i] = 0
    end
  else
    redis.call('PEXPIRE', markers, 60000)
    reply[first] = 1
    local reset, left = {}, 0
    if redis.call('EXISTS', resets) == 1 then
      reset = redis.call('HMGET', resets, unpack(KEYS, k + 1, k + limits))
    end
    for i = 1, limits do
      local base = a + 5 + 5 * (i - 1)
      if reset[i] and tonumber(reset[i]) >= at then
        reply[first + i], left = 0, left + 1
      elseif reserved(i) == actual(i) then
        reply[first + i] = 0
      else
        reply[first + i] = settles[ARGV[base]](KEYS[k + i], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), now,
          at, reserved(i), actual(i), ARGV[base + 3], tonumber(ARGV[base + 4]))
      end
    end
    reply[first + limits + 1] = left
  end
  k, a = k + limits + 2, a + 6 + 5 * limits
end
return reply
