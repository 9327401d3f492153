-- Resets a client's counts on a target: deletes its keys and notes, in the client's resets hash, when each was
-- reset, so that settle.lua leaves alone what a reservation made before the reset held: a stream admitted before
-- the reset and settled after it would else refund its pre-reset reservation into the counts the client makes
-- afterwards (fresh quota), or charge its usage there.
--
-- KEYS[1]  the client's resets hash (under its hash tag): one field per key reset (deleted), its value the
--          reset's time
-- KEYS[2..] the keys to delete (all under the same hash tag)
-- ARGV[1]  how long the hash is kept, in ms: the longest window of any limit (no reservation outlives it)
-- Reply    {how many keys were deleted}
local function clock()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local now = clock()
local deleted = 0
for i = 2, #KEYS do
  -- a key that is not there holds no reservation to forgive: nothing noted (a reset of a client never seen
  -- writes nothing)
  if redis.call('UNLINK', KEYS[i]) == 1 then
    deleted = deleted + 1
    redis.call('HSET', KEYS[1], KEYS[i], now)
  end
end
if deleted == 0 then
  return {0}
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
-- A reservation made before the reset has a time (`at`, a decision's clock in ms) at most `now`; one made after
-- must read a later one, or its settle is taken for one made before. So the script ends in the next millisecond
-- (Redis runs nothing else meanwhile; TIME moves within a script): under a millisecond of Redis, once per
-- reset. Bounded, should the clock not move.
for _ = 1, 1000000 do
  if clock() > now then
    break
  end
end
return {deleted}
