-- Sliding log, ring storage (the default): exact, O(log limit) per decision, 8 bytes per unit of limit.
-- Keeps the times of the last `limit` accepted requests in one string. The request is allowed iff the
-- oldest of them has left the window: then fewer than `limit` accepted requests lie inside it. This
-- decides exactly as the sorted-set log (sliding_log_sorted_set.lua) does while time runs forward.
--
-- KEYS[1]  the client's ring. Bytes 0-7: header, the limit and the slot of the oldest time (two
--          big-endian uint32); then `limit` slots of 8 bytes, each an accepted request's time in ms
--          (big-endian double; 0 = never used). Allocated whole on first use, so memory is exactly
--          8 + 8 * limit bytes of value, whatever the traffic; a new limit starts a new ring.
-- ARGV[1]  limit: requests allowed in any window-long span, >= 1
-- ARGV[2]  window length in ms, >= 1
-- ARGV[3]  now in ms since the epoch, or "" to use the Redis server's clock (TIME)
-- Reply    {allowed (1|0), remaining, reset ms (until the oldest request in the window leaves it),
--           retry-after ms (0 when allowed)}
--
-- A request at time t counts while now - window < t. Denied requests write nothing.
-- The key expires one window after the newest accepted request.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local key = KEYS[1]
local HEADER = 8

local function slot_time(slot)
  local offset = HEADER + 8 * slot
  local bytes = redis.call('GETRANGE', key, offset, offset + 7)
  local time = (#bytes == 8) and struct.unpack('>d', bytes) or 0
  -- an unused slot (0) holds no request: older than any window
  return (time == 0) and -math.huge or time
end

local oldest = 0
local header = redis.call('GETRANGE', key, 0, HEADER - 1)
local stored_limit, stored_oldest = 0, 0
if #header == HEADER then
  stored_limit, stored_oldest = struct.unpack('>I4I4', header)
end
if stored_limit == limit then
  oldest = stored_oldest
else
  redis.call('SET', key, struct.pack('>I4I4', limit, 0) .. string.rep('\0', 8 * limit))
end

local oldest_time = slot_time(oldest)
if oldest_time > now - window then
  local wait = oldest_time + window - now
  return {0, 0, wait, wait}
end

redis.call('SETRANGE', key, HEADER + 8 * oldest, struct.pack('>d', now))
local next_oldest = (oldest + 1) % limit
redis.call('SETRANGE', key, 0, struct.pack('>I4I4', limit, next_oldest))
redis.call('PEXPIRE', key, window)

-- Times rise from slot next_oldest onwards (the slot just written is the newest): binary search for
-- the first one still inside the window to count what the window holds.
local low, high = 0, limit - 1
while low < high do
  local middle = math.floor((low + high) / 2)
  if slot_time((next_oldest + middle) % limit) > now - window then
    high = middle
  else
    low = middle + 1
  end
end
local in_window = limit - low
local first_in_window = slot_time((next_oldest + low) % limit)
return {1, limit - in_window, first_in_window + window - now, 0}
