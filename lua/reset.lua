-- Resets a client's counts on a target: deletes its keys and notes, in the client's resets hash, when each was
-- reset, so that settle.lua leaves alone what a reservation made before the reset held: a stream admitted before
-- the reset and settled after it would else refund its pre-reset reservation into the counts the client makes
-- afterwards (fresh quota), or charge its usage there.
--
-- KEYS[1]  the client's resets hash (under its hash tag): one field per key reset, its value the reset's time
-- KEYS[2..] the keys to delete (all under the same hash tag)
-- ARGV[1]  how long the hash is kept, in ms: the longest window of any limit (no reservation outlives it)
-- Reply    {how many keys were deleted}
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deleted = 0
for i = 2, #KEYS do
  deleted = deleted + redis.call('UNLINK', KEYS[i])
  redis.call('HSET', KEYS[1], KEYS[i], now)
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {deleted}
