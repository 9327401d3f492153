-- Sliding log, ring storage (the default): exact. One entry per accepted request, holding its time and its
-- cost (requests logged in the same millisecond share one), oldest first, in a ring inside one string. A
-- request of cost c is allowed iff the entries inside the window hold at most limit - c units. So what a
-- request costs Redis, in memory and time, does not grow with its cost: a call of a million tokens is one
-- entry like a call of one. O(log n) per decision (amortised: a ring that has to grow or shrink is copied
-- once), where n = entries kept. Decides as the sorted-set log (sliding_log_sorted_set.lua) does, whatever
-- the clock does.
--
-- Key      bytes 0-11: header, three big-endian uint32: the slot of the oldest kept entry, how many entries
--          are kept, and the units logged before the oldest kept entry; then the slots, 8 bytes each, one
--          entry: a big-endian uint64 whose high 42 bits are the entry's time in ms since the epoch (enough
--          until 2109) and whose low 22 bits the units logged up to and including it. A running count, so the
--          units of any run of entries are a difference of two counts, and a binary search finds the entry
--          holding the n-th unit of the window. Counts are kept modulo 2^22: a difference is exact while the
--          log holds fewer units than that, which it always does (at most 2^21 but for a pile of late charges,
--          which it trims: see log_append). An entry holds at most 2^20 units (above every limit, at most
--          1,000,000). The ring's capacity is the string's length: when the entries fill it, or drop to a
--          quarter of it, they are copied into a ring of twice their number, never past `limit` slots. So a
--          client costs 8 to 32 bytes per request in its window, whatever the requests cost; a fresh key
--          holds 2 slots. The limit is not stored: a changed limit counts the same history. Expires one window
--          after the newest accepted request. A request at time t counts while now - window < t.
-- Returns  allowed, remaining (after this request when allowed), reset (until the oldest request in
--          the window leaves it; a window when none is in it), retry-after (0 when allowed; -1 when the
--          cost is above the limit: such a request never passes), record.
--
-- Entries that have left the window are dropped when a request is accepted, never on a denial: a flood
-- over the limit writes nothing. A request is logged no earlier than the newest logged one, so the
-- ring stays in time order when the Redis clock steps back (failover to a lagging replica); such a
-- request then counts a little longer than a minute, never shorter.
--
-- The previous layout (key suffix ring, not wlog) kept one time per unit of cost. While a rolling upgrade
-- lasts, instances of the previous version go on counting there: a key of this layout that does not exist
-- yet starts from the previous layout's key of the same limit, read once (see log_migrate), and never writes
-- it.
local LOG_HEADER = 12
-- the running count's modulus, 2^22, and the most units one entry holds, 2^20
local LOG_COUNT = 4194304
local LOG_MOST = 1048576

local function log_entry(time, count)
  return struct.pack('>I4I4', math.floor(time / 1024), (time % 1024) * LOG_COUNT + count % LOG_COUNT)
end

-- the entry at position `at` (1-based) of `bytes`: its time, and the units logged up to and including it
local function log_read(bytes, at)
  local high, low = struct.unpack('>I4I4', bytes, at)
  return high * 1024 + math.floor(low / LOG_COUNT), low % LOG_COUNT
end

-- Copies the key of the previous layout of this limit (8-byte header: the oldest slot, how many are kept;
-- then one big-endian double per unit: the time it was logged at) into `key`, with its expiry: runs of
-- equal times become one entry. Returns whether there was one. Once per key, reading at most LOG_PARTS of
-- its times whatever it holds: a key of more units (it kept up to a million) is read in LOG_PARTS parts of
-- consecutive units, each counted from the time of its newest unit, so some count up to a part's span of
-- time longer than they did, never shorter (and exactly when a part is one request's units).
local LOG_PARTS = 1024
local function log_migrate(key, now, window)
  local prefix, place = string.match(key, '^(.*):wlog(%d*)$')
  if not prefix then
    return false
  end
  local legacy = prefix .. ':ring' .. place
  local header = redis.call('GETRANGE', legacy, 0, 7)
  if #header ~= 8 then
    return false
  end
  local oldest, kept = struct.unpack('>I4I4', header)
  local capacity = (redis.call('STRLEN', legacy) - 8) / 8
  if kept == 0 or kept > capacity or capacity ~= math.floor(capacity) then
    return false
  end
  local step = math.ceil(kept / LOG_PARTS)
  local times, units, total, taken = {}, {}, kept, 0
  while taken < kept do
    local last = math.min(kept, taken + step) - 1
    local at = 8 + 8 * ((oldest + last) % capacity)
    -- whole milliseconds, never earlier: a unit counts no shorter than it did
    local time = math.ceil((struct.unpack('>d', redis.call('GETRANGE', legacy, at, at + 7))))
    if not (time >= 0 and time < 4398046511104) then
      -- not a time this layout can hold (nor NaN): a damaged key, read as none
      return false
    end
    local run, n = last + 1 - taken, #times
    if n > 0 and times[n] >= time and units[n] + run <= LOG_MOST then
      units[n] = units[n] + run
    else
      times[n + 1], units[n + 1] = math.max(time, times[n] or time), run
    end
    taken = last + 1
  end
  -- as log_append trims: the newest entries holding LOG_MOST units decide all an older one could
  local from = 1
  while total - units[from] >= LOG_MOST and total >= 2 * LOG_MOST do
    total = total - units[from]
    from = from + 1
  end
  local entries, count = {}, 0
  for i = from, #times do
    count = count + units[i]
    entries[#entries + 1] = log_entry(times[i], count)
  end
  redis.call('SET', key, struct.pack('>I4I4I4', 0, #entries, 0) .. table.concat(entries))
  local ttl = redis.call('PTTL', legacy)
  redis.call('PEXPIRE', key, (ttl > 0) and ttl or math.max(1, times[#times] + window - now))
  return true
end

-- The log at key, read through the functions of the table returned: fields oldest, kept, before (the units
-- logged before the oldest kept entry) and capacity, as in the header.
local function log_open(key, now, window)
  local log = {oldest = 0, kept = 0, before = 0, capacity = 0}
  local header = redis.call('GETRANGE', key, 0, LOG_HEADER - 1)
  if #header ~= LOG_HEADER and log_migrate(key, now, window) then
    header = redis.call('GETRANGE', key, 0, LOG_HEADER - 1)
  end
  if #header == LOG_HEADER then
    log.oldest, log.kept, log.before = struct.unpack('>I4I4I4', header)
    log.capacity = (redis.call('STRLEN', key) - LOG_HEADER) / 8
  end

  local function offset(i)
    return LOG_HEADER + 8 * ((log.oldest + i) % log.capacity)
  end
  -- the i-th kept entry, 0 = the oldest: its time, and the units logged up to and including it
  function log.entry(i)
    local at = offset(i)
    return log_read(redis.call('GETRANGE', key, at, at + 7), 1)
  end
  -- the units logged up to and including the i-th kept entry; for i = -1, before the oldest
  function log.count(i)
    if i < 0 then
      return log.before
    end
    local _, count = log.entry(i)
    return count
  end
  -- the units the entries i to j hold
  function log.units(i, j)
    if j < i then
      return 0
    end
    return (log.count(j) - log.count(i - 1)) % LOG_COUNT
  end
  -- the first kept entry from `from` on that passes `test`, which every entry after it passes too; or kept
  function log.search(from, test)
    local low, high = from, log.kept
    while low < high do
      local middle = math.floor((low + high) / 2)
      if test(middle) then
        high = middle
      else
        low = middle + 1
      end
    end
    return low
  end
  -- the first kept entry logged after `time`, or kept
  function log.after(time)
    return log.search(0, function(i)
      return (log.entry(i)) > time
    end)
  end
  -- the entry holding the n-th unit (n >= 1) counted from the `from`-th entry on
  function log.holding(from, n)
    local before = log.count(from - 1)
    return log.search(from, function(i)
      return (log.count(i) - before) % LOG_COUNT >= n
    end)
  end
  -- the bytes of n kept entries from the i-th on (the ring may wrap)
  function log.bytes(i, n)
    if n <= 0 then
      return ''
    end
    local from, to = offset(i), offset(i + n - 1)
    if from <= to then
      return redis.call('GETRANGE', key, from, to + 7)
    end
    return redis.call('GETRANGE', key, from, -1) .. redis.call('GETRANGE', key, LOG_HEADER, to + 7)
  end
  -- writes whole entries from the i-th kept one on
  function log.write(i, bytes)
    if #bytes == 0 then
      return
    end
    local from = offset(i)
    local room = LOG_HEADER + 8 * log.capacity - from
    if #bytes <= room then
      redis.call('SETRANGE', key, from, bytes)
    else
      redis.call('SETRANGE', key, from, string.sub(bytes, 1, room))
      redis.call('SETRANGE', key, LOG_HEADER, string.sub(bytes, room + 1))
    end
  end
  return log
end

-- Logs `units` now, no earlier than the newest entry, in that entry when it has that time; drops the
-- entries before the low-th (those that have left the window) and sets the expiry. A pile of late charges
-- (each at most the limit, past it) could outgrow what the counts tell apart: then only the newest entries
-- holding LOG_MOST units besides these are kept. While those are in the window they refuse every request
-- (every limit is lower); once they have left, so have the older ones. So decisions and Retry-After are
-- what the whole log would give; only the reset tells of the oldest kept.
local function log_append(log, key, low, units, limit, window, now)
  local stamp, newest, count = now, nil, log.before
  if log.kept > 0 then
    newest, count = log.entry(log.kept - 1)
    stamp = math.max(now, newest)
  end
  if log.units(low, log.kept - 1) + units >= 2 * LOG_MOST then
    local short = log.search(low, function(i)
      return (count - log.count(i - 1)) % LOG_COUNT + units < LOG_MOST
    end)
    low = math.max(low, short - 1)
  end
  -- the newest entry, when it has this time, is in the window (now - window < now <= stamp)
  local merge = newest == stamp and log.units(log.kept - 1, log.kept - 1) + units <= LOG_MOST
  local before, kept = log.count(low - 1), log.kept - low
  local entries = kept + (merge and 0 or 1)
  local entry = log_entry(stamp, count + units)
  if entries > log.capacity or 4 * entries <= log.capacity or log.capacity > math.max(limit, entries) then
    -- Copy the entries still in the window into a ring of twice what is needed (at most `limit`): SET
    -- allocates exactly that, where APPEND or SETRANGE past the end would let Redis over-allocate up to double.
    local size = math.max(entries, math.min(limit, 2 * entries))
    redis.call('SET', key, struct.pack('>I4I4I4', 0, entries, before) .. log.bytes(low, entries - 1) .. entry
      .. string.rep('\0', 8 * (size - entries)))
  else
    log.oldest = (log.oldest + low) % log.capacity
    log.write(entries - 1, entry)
    redis.call('SETRANGE', key, 0, struct.pack('>I4I4I4', log.oldest, entries, before))
  end
  redis.call('PEXPIRE', key, stamp + window - now)
end

algorithms['SLIDING_LOG'] = function(key, limit, window, now, cost)
  local log = log_open(key, now, window)
  -- Entries rise in time from the oldest on: binary search for the first one still inside the window.
  local low = log.after(now - window)
  local in_window = log.units(low, log.kept - 1)
  -- every kept entry holds a unit (a refund drops an entry it empties): the first in the window is the oldest
  local reset = window
  if in_window > 0 then
    reset = log.entry(low) + window - now
  end
  if cost > limit then
    return false, math.max(0, limit - in_window), reset, -1
  end
  if in_window + cost > limit then
    -- Allowed once all but limit - cost of them have left: wait for unit number in_window + cost - limit.
    local wait = log.entry(log.holding(low, in_window + cost - limit)) + window - now
    return false, math.max(0, limit - in_window), reset, wait
  end
  return true, limit - in_window - cost, reset, 0, function()
    log_append(log, key, low, cost, limit, window, now)
  end
end

-- Settle (see settle.lua). A refund takes the reservation's units out of the entries logged at `at` exactly
-- while they are inside the window (those of other requests in the same millisecond are the same time, so
-- any of them will do): those entries become one, or none when it would hold nothing, and either the
-- entries after them or those before them are rewritten, whichever are fewer: each running count of the
-- ones after one less per unit given back, or of the ones before (and the count before the oldest) one more,
-- which moves the units given back before the oldest entry, where they count no more. A log left holding
-- nothing is deleted. Once the units have left the window there is nothing to give back. A reservation
-- logged later than `at` (only when the Redis clock had stepped back below a logged time) is not found:
-- nothing is given back, never another request's. A late charge logs the extra units now (no earlier than
-- the newest entry), even past the limit, at most `limit` of them: `limit` units at one instant already
-- refuse every request until they leave, so more would decide nothing differently. The client is then
-- refused until they leave the window, no longer.
settles['SLIDING_LOG'] = function(key, limit, window, now, at, reserved, actual)
  local log = log_open(key, now, window)
  if actual > reserved then
    local add = math.min(actual - reserved, limit)
    log_append(log, key, log.after(now - window), add, limit, window, now)
    return add
  end
  if at <= now - window then
    return 0
  end
  local first = log.search(0, function(i)
    return (log.entry(i)) >= at
  end)
  local after = log.search(first, function(i)
    return (log.entry(i)) > at
  end)
  local held = log.units(first, after - 1)
  local back = math.min(reserved - actual, held)
  if back <= 0 then
    return 0
  end
  if back == log.units(0, log.kept - 1) then
    redis.call('DEL', key)
    return -back
  end
  local rest = held - back
  local rewritten = {}
  if log.kept - after <= first then
    if rest > 0 then
      rewritten[1] = log_entry(at, log.count(after - 1) - back)
    end
    local bytes = log.bytes(after, log.kept - after)
    for i = 1, #bytes, 8 do
      local time, count = log_read(bytes, i)
      rewritten[#rewritten + 1] = log_entry(time, count - back)
    end
    log.write(first, table.concat(rewritten))
    redis.call('SETRANGE', key, 0, struct.pack('>I4I4I4', log.oldest, first + #rewritten, log.before))
  else
    local bytes = log.bytes(0, first)
    for i = 1, #bytes, 8 do
      local time, count = log_read(bytes, i)
      rewritten[#rewritten + 1] = log_entry(time, count + back)
    end
    if rest > 0 then
      rewritten[#rewritten + 1] = log_entry(at, log.count(after - 1))
    end
    local dropped = after - #rewritten
    log.oldest = (log.oldest + dropped) % log.capacity
    log.write(0, table.concat(rewritten))
    redis.call('SETRANGE', key, 0,
      struct.pack('>I4I4I4', log.oldest, log.kept - dropped, (log.before + back) % LOG_COUNT))
  end
  return -back
end
