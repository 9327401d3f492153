-- Releases the concurrency slots of one request when its response ends (completed, failed, or the client
-- gone): removes its id from each of its concurrency limits' sets. Idempotent: a second call finds nothing to
-- remove, whenever it comes (Lettuce sending the command again after a reconnect; the gateway's second send of a
-- release Redis could not take, once it answers again, which may follow a first send that ran on thawing). A
-- release dropped beyond the gateway's bound of kept calls leaves the slot to expire after its window.
--
-- KEYS[i]  the client's key of each concurrency limit of the request (all share one hash tag)
-- ARGV[1]  the request's id, as decide.lua recorded it
-- Reply    {how many slots were removed} (0: released before, or expired)
local removed = 0
for i = 1, #KEYS do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[1])
end
return {removed}
