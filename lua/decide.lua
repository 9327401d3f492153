-- Decides one request against one or more limits, atomically and all or nothing: the request is
-- counted by every limit or, when any limit denies it, by none. Assembled at start-up with one
-- module per algorithm before it (see LimitScript), each defining in the table `algorithms`:
--
--   algorithms[name] = function(key, limit, window, now, cost, extra)
--     -> allowed (boolean), remaining, reset ms, retry-after ms, record (function writing the request)
--
-- A check writes nothing that counts (on a request, not a peek, it may restate the stored state in the current policy's terms,
-- once, after a change of window, limit or burst); `record` is called for every limit once all have
-- allowed. A cost above what a limit allows at once is denied with retry-after -1: it never passes.
--
-- KEYS[i]  the client's key for limit i (all share one hash tag)
-- ARGV[1]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- ARGV[2]  cost: what this request consumes of every limit, >= 1; or 0 to peek: the reply tells the
--          client's standing now (remaining, reset) and nothing is recorded, so reading spends nothing;
--          or, when limits differ, one cost per limit, comma separated (an LLM route reserves tokens in
--          its token limits and 1 in its request limits)
-- ARGV[3 + 4(i-1) ..]  for limit i: algorithm name, limit, window in ms, extra ("" when none)
-- ARGV[3 + 4n], ARGV[4 + 4n]  (n limits; both absent or "0" on a route without max-delay) the route's
--          max-delay in ms, and the longest this request may be held (the max-delay, or 0 when its
--          instance holds all it may): decided by decide_held (hold.lua), which reserves a later slot
-- Reply    {allowed (1|0), then for each limit: allowed (1|0), remaining, reset ms, retry-after ms
--          (-1: never)}, then with a penalty the client's block's time left in ms (0: none), then the time
--          decided at (now, in ms): what settle.lua needs to find the window a reservation was counted in;
--          on a route with a max-delay instead: the time the request was counted at (its slot, in ms since
--          the epoch) and how long to hold it, in ms (a route has a penalty or a max-delay, not both)
--
-- Penalty (block-for), when #ARGV = 4 * #KEYS - 1: the last key is the client's block key on the route
-- and the last argument each limit's block-for in ms, comma separated (0: none). A blocked client is
-- refused by the limit that blocked it (the key's value) until the key expires, and charged nothing:
-- each limit is read as at cost 0 for the headers. A read (cost 0) of a blocked client is not refused:
-- it shows what each limit holds, and the block's time left. A request a limit refuses (and that could pass
-- later) sets the block for the longest block-for of the limits refusing it; its retry-after is then
-- at least the block's.
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local cost = tonumber(ARGV[2])
local costs = {}
if not cost then
  cost = 0
  for each in string.gmatch(ARGV[2], '%d+') do
    costs[#costs + 1] = tonumber(each)
    cost = math.max(cost, tonumber(each))
  end
end
local max_delay = tonumber(ARGV[3 + 4 * #KEYS]) or 0
if max_delay > 0 then
  return decide_held(now, cost, max_delay, tonumber(ARGV[4 + 4 * #KEYS]) or 0)
end

local limits, block_key, block_for = #KEYS, nil, nil
if #ARGV == 4 * #KEYS - 1 then
  limits, block_key, block_for = #KEYS - 1, KEYS[#KEYS], ARGV[#ARGV]
end
local blocked_by, blocked = nil, 0
if block_key then
  blocked_by = tonumber(redis.call('GET', block_key))
  if blocked_by then
    blocked = redis.call('PTTL', block_key)
    blocked_by = math.min(math.max(1, blocked_by), limits)
    if blocked <= 0 then
      blocked_by, blocked = nil, 0
    end
  end
end

local reply = {1}
local records = {}
for i = 1, limits do
  local base = 3 + 4 * (i - 1)
  local check = algorithms[ARGV[base]]
  local allowed, remaining, reset, retry, record =
    check(KEYS[i], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), now, blocked_by and 0 or costs[i] or cost,
      ARGV[base + 3])
  -- a blocked client is refused by the limit that blocked it; a read (cost 0) shows what that limit holds
  if i == blocked_by and cost > 0 then
    allowed, remaining, reset, retry = false, 0, math.max(reset, blocked), blocked
  end
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
elseif block_key and not blocked_by and cost > 0 then
  -- refused: the longest block-for among the limits that refused a request that could pass later
  local i, by = 0, nil
  for ms in string.gmatch(block_for, '%d+') do
    i = i + 1
    ms = tonumber(ms)
    local at = 2 + 4 * (i - 1)
    if ms > blocked and reply[at] == 0 and reply[at + 3] ~= -1 then
      blocked, by = ms, i
    end
  end
  if by then
    redis.call('SET', block_key, by, 'PX', blocked)
    local at = 2 + 4 * (by - 1)
    reply[at + 2], reply[at + 3] = math.max(reply[at + 2], blocked), math.max(reply[at + 3], blocked)
  end
end
if block_key then
  reply[#reply + 1] = blocked
end
reply[#reply + 1] = now
return reply
