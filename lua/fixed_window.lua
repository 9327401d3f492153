-- Fixed window: one counter per clock-aligned window (index = floor(now / window), epoch-aligned).
--
-- Key      "<window index>:<count>", so a stale window reads as zero even when the caller's clock
--          (an explicit `now`) is not the one Redis expires keys by. Expires when its window ends.
-- Returns  allowed, remaining (after this request when allowed), reset = until the window ends,
--          retry-after = the window's end (0 when allowed), record.
algorithms['FIXED_WINDOW'] = function(key, limit, window, now, cost)
  local index = math.floor(now / window)
  local until_end = (index + 1) * window - now

  local count = 0
  local stored = redis.call('GET', key)
  if stored then
    local stored_index, stored_count = string.match(stored, '^(%d+):(%d+)$')
    if tonumber(stored_index) == index then
      count = tonumber(stored_count)
    end
  end

  if count + cost > limit then
    return false, math.max(0, limit - count), until_end, until_end
  end
  return true, limit - count - cost, until_end, 0, function()
    redis.call('SET', key, string.format('%d:%d', index, count + cost), 'PX', until_end)
  end
end
