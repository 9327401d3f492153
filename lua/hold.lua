-- Holding instead of refusing (a route's max-delay): a request the limits would take within max-delay is
-- counted now at the time it will pass (its slot) and the reply says how long to hold it; later
-- requests see the slot taken, on every instance, since the slot is written by this script. Only the
-- token bucket and the fixed window can reserve exactly (see docs/max-delay.md); the configuration
-- keeps the other algorithms off routes with a max-delay. Assembled after the fixed window's module (it
-- reads the fixed window's layout with its functions) and before decide.lua, which calls decide_held.
--
--   holds[name] = function(key, limit, window, now, cost, extra, at, max_delay)
--     -> slot (the earliest time >= at this limit takes the request; nil: never, the cost is above what
--        it allows at once), left (after the request, at its slot), reset ms, record (writes the request
--        at slot), left now (before the request)
--
-- Writes nothing that counts but for record, as the checks (a restatement after a change of policy, or
-- a token bucket time pulled back within reach, may be written at once on a request; a peek writes
-- nothing).
local holds = {}

-- The token bucket (GCRA) takes a request at time t when max(tat, t) + cost * interval - burst * interval
-- <= t: from t = tat - (burst - cost) * interval on. Holding lets the TAT lie up to max_delay further
-- ahead than a bucket emptied now; anything further (a clock stepped back, a policy changed) is pulled
-- back to that, as the check does without holding.
holds['TOKEN_BUCKET'] = function(key, limit, window, now, cost, extra, at, max_delay)
  local burst = tonumber(extra)
  local interval = window / limit
  local tat = math.max(tonumber(redis.call('GET', key)) or now, now)
  local furthest = now + burst * interval + max_delay
  if tat > furthest then
    tat = furthest
    if cost > 0 then
      redis.call('SET', key, string.format('%.17g', tat), 'PX', math.ceil(tat - now))
    end
  end
  local left_now = math.max(0, math.floor((now - (tat - burst * interval)) / interval))
  if cost > burst then
    return nil, left_now, math.ceil(tat - now), nil, left_now
  end
  local slot = math.max(at, tat - (burst - cost) * interval)
  local new_tat = math.max(tat, slot) + cost * interval
  local until_full = math.ceil(new_tat - now)
  return slot, math.max(0, math.floor((slot - (new_tat - burst * interval)) / interval)), until_full, function()
    redis.call('SET', key, string.format('%.17g', new_tat), 'PX', until_full)
  end, left_now
end

-- The fixed window stores one window: the latest that holds requests, the current one or one ahead of
-- it. A request goes into the first window from `at` on with room for it, never into one before the
-- stored window: an earlier window gave its room to the requests before, or the request that moved on
-- did not fit it. (A cheaper request that could still fit an earlier window waits for the stored one:
-- never more than the limit in a window, at most some room left unused.)
holds['FIXED_WINDOW'] = function(key, limit, window, now, cost, extra, at)
  local current = math.floor(now / window)
  -- the window counting now, and other policies' windows kept, as the check reads them (fixed_window.lua)
  local mine, kept, restated = windows_state(redis.call('GET', key),
    {start = current * window, finish = (current + 1) * window, index = current, length = window},
    function(part) return part.length == window end, limit, now)
  if restated and cost > 0 then
    windows_write(key, mine, kept, 0, now)
  end
  local index, count = mine.index, mine.count
  local left_now = (index == current) and math.max(0, limit - count) or 0
  if cost > limit then
    return nil, left_now, (index + 1) * window - now, nil, left_now
  end
  local slot_index = math.max(index, math.floor(at / window))
  local used = (slot_index == index) and count or 0
  if used + cost > limit then
    slot_index, used = slot_index + 1, 0
  end
  local until_end = (slot_index + 1) * window - now
  return math.max(at, slot_index * window), limit - used - cost, until_end, function()
    local slot = {start = slot_index * window, finish = (slot_index + 1) * window, count = used, index = slot_index,
      length = window}
    windows_write(key, slot, kept, cost, now)
  end, left_now
end

-- Decides every limit of the request at one slot: the latest of their earliest slots, found by asking
-- each limit again from the latest so far until none moves it (a fixed window may have to move on to
-- its next window). All are recorded at that slot, or none. Reply as decide.lua's, with two more numbers:
-- the time the request was counted at (its slot; now when refused), and how long to hold it, in ms. Refused: retry-after is when a retry would be held no longer than
-- max_delay.
--   max_delay  the route's max-delay in ms: how far ahead slots may have been reserved
--   longest    the longest this request may be held: max_delay, or 0 when its instance holds all it may
-- Sets the decide_held the script declares before the modules: this module is defined only on a route with a
-- max-delay, inside the fixed window's block, whose functions it reads.
function decide_held(now, cost, max_delay, longest)
  local n = #KEYS
  local results = {}
  local function ask(i, at)
    local base = 3 + 4 * (i - 1)
    results[i] = {holds[ARGV[base]](KEYS[i], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), now, cost,
      ARGV[base + 3], at, max_delay)}
  end

  if cost == 0 then
    -- a peek: each limit's standing now, nothing recorded
    local reply = {1}
    for i = 1, n do
      ask(i, now)
      local r = results[i]
      for _, value in ipairs({1, r[5], r[3], 0}) do
        reply[#reply + 1] = value
      end
    end
    reply[#reply + 1] = now
    reply[#reply + 1] = 0
    return reply
  end

  local at, settled, never = now, false, false
  -- each pass either settles or moves `at` on to some limit's slot; a handful settle any real route
  for _ = 1, 16 do
    settled = true
    for i = 1, n do
      ask(i, at)
      local slot = results[i][1]
      if slot == nil then
        never = true
      elseif slot > at then
        at, settled = slot, false
      end
    end
    if settled or never or at - now > longest then
      break
    end
  end

  local hold = math.ceil(at - now)
  local allowed = settled and not never and hold <= longest
  local reply = {allowed and 1 or 0}
  local latest = 0
  for i = 1, n do
    local slot = results[i][1]
    if slot and (latest == 0 or slot > results[latest][1]) then
      latest = i
    end
  end
  for i = 1, n do
    local slot, left, reset, _, left_now = unpack(results[i], 1, 5)
    local values
    if allowed then
      values = {1, left, reset, 0}
    elseif slot == nil then
      values = {0, left_now, reset, -1}
    elseif slot - now > longest or (not never and i == latest) then
      -- a refusal names at least the limit whose slot is latest; its wait is until a retry could be held
      -- (for a request refused only for want of leave to hold it, the shortest: 1 ms), so that the deny
      -- cache never keeps refusing a client another request could have been held for
      local wait = math.max(1, math.ceil(slot - now - max_delay))
      values = {0, left_now, wait, wait}
    else
      values = {1, left_now, reset, 0}
    end
    for _, value in ipairs(values) do
      reply[#reply + 1] = value
    end
  end
  if allowed then
    for i = 1, n do
      results[i][4]()
    end
  end
  -- the time the request was counted at (its slot, in whole ms: within the slot's window), then the hold
  reply[#reply + 1] = allowed and math.floor(at) or now
  reply[#reply + 1] = allowed and hold or 0
  return reply
end
