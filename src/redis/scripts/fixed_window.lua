-- Fixed window, windows aligned to multiples of W on the time line.
-- KEYS[1]: hash {i = window number, u = units used in it}.
-- ARGV[4]: W in microseconds. ARGV[5]: the limit per window.
-- Returns {allowed, remaining, retry after us, reset after us}.
local window = tonumber(ARGV[4])
local limit = tonumber(ARGV[5])

local index = div(now, window)
local used = 0
local stored = redis.call('HMGET', KEYS[1], 'i', 'u')
if stored[1] and stored[2] then
  local stored_index, stored_used = tonumber(stored[1]), tonumber(stored[2])
  if stored_used > 0 and stored_index >= index then
    -- A later window than ours was stored: time never moves back for a key.
    index = stored_index
    used = stored_used
  end
end

local until_end = (index + 1) * window - now
local reset = 0
if used > 0 then
  reset = until_end
end
-- Never below 0: a limiter with a lower limit may share the key.
local remaining = math.max(limit - used, 0)
if used + wanted > limit then
  return {0, remaining, until_end, reset}
end
if cost == 0 then
  return {1, remaining, 0, reset}
end
used = used + cost
redis.call('HSET', KEYS[1], 'i', int(index), 'u', int(used))
expire_in(KEYS[1], until_end)
return {1, limit - used, 0, until_end}
