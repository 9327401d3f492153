-- Decides one request against one or more limits, atomically and all or nothing: the request is
-- counted by every limit or, when any limit denies it, by none. Assembled at start-up with one
-- module per algorithm before it (see LimitScript), each defining in the table `algorithms`:
--
--   algorithms[name] = function(key, limit, window, now, cost, extra)
--     -> allowed (boolean), remaining, reset ms, retry-after ms, record (function writing the request)
--
-- A check writes nothing that counts (it may restate the stored state in the current policy's terms,
-- once, after a change of window, limit or burst); `record` is called for every limit once all have
-- allowed. A cost above what a limit allows at once is denied with retry-after -1: it never passes.
--
-- KEYS[i]  the client's key for limit i (all share one hash tag)
-- ARGV[1]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- ARGV[2]  cost: what this request consumes of every limit, >= 1; or 0 to peek: the reply tells the
--          client's standing now (remaining, reset) and nothing is recorded, so reading spends nothing
-- ARGV[3 + 4(i-1) ..]  for limit i: algorithm name, limit, window in ms, extra ("" when none)
-- ARGV[3 + 4n + (i-1)]  optional, after the n limits: the cost of limit i when limits differ (an LLM
--          route reserves tokens in its token limits and 1 in its request limits); absent: ARGV[2] for all
-- Reply    {allowed (1|0), then for each limit: allowed (1|0), remaining, reset ms, retry-after ms
--          (-1: never); then the time decided at (now, in ms): what settle.lua needs to find the window a
--          reservation was counted in}
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local cost = tonumber(ARGV[2])

local reply = {1}
local records = {}
local costs = 3 + 4 * #KEYS
for i = 1, #KEYS do
  local base = 3 + 4 * (i - 1)
  local check = algorithms[ARGV[base]]
  local own = (cost > 0 and ARGV[costs + i - 1]) and tonumber(ARGV[costs + i - 1]) or cost
  local allowed, remaining, reset, retry, record =
    check(KEYS[i], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), now, own, ARGV[base + 3])
  if not allowed then
    reply[1] = 0
  end
  records[i] = record
  reply[#reply + 1] = allowed and 1 or 0
  reply[#reply + 1] = remaining
  reply[#reply + 1] = reset
  reply[#reply + 1] = retry
end

if reply[1] == 1 and cost > 0 then
  for i = 1, #records do
    records[i]()
  end
end
reply[#reply + 1] = now
return reply
