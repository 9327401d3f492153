-- Releases the concurrency slots of one request when its response ends (completed, failed, or the client
-- gone): removes its id from each of its concurrency limits' sets. Idempotent: a second call (Lettuce sending
-- the command again after a reconnect) finds nothing to remove. Never sent twice by the gateway itself, never
-- queued or retried: a release Redis cannot take is dropped, and the slot expires after its window.
--
-- KEYS[i]  the client's key of each concurrency limit of the request (all share one hash tag)
-- ARGV[1]  the request's id, as decide.lua recorded it
-- Reply    {how many slots were removed} (0: released before, or expired)
local removed = 0
for i = 1, #KEYS do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[1])
end
return {removed}
