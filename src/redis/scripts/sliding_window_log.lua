-- Sliding window log, exact: a unit admitted at t counts until t + W.
-- KEYS[1]: sorted set of entries 'time:units' scored by time (admissions at one
-- instant share an entry). KEYS[2]: the sum of units over the entries.
-- ARGV[4]: W in microseconds. ARGV[5]: the limit.
-- Returns {allowed, remaining, retry after us, reset after us}.
local window = tonumber(ARGV[4])
local limit = tonumber(ARGV[5])

local function units_of(member)
  return tonumber(string.match(member, ':(%d+)$'))
end

local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local newest_at = nil
if newest[2] then
  newest_at = tonumber(newest[2])
  -- Time never moves back for a key.
  now = math.max(now, newest_at)
end

-- Drop entries that stopped counting at or before now.
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
local horizon = int(now - window)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', horizon)
if #expired > 0 then
  for _, member in ipairs(expired) do
    total = total - units_of(member)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', horizon)
  if total > 0 then
    redis.call('SET', KEYS[2], int(total), 'KEEPTTL')
  else
    redis.call('DEL', KEYS[1], KEYS[2])
    total, newest_at = 0, nil
  end
end

local reset = 0
if newest_at then
  reset = newest_at + window - now
end
if total + wanted > limit then
  local retry = 0
  local still_counted = total
  local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #entries, 2 do
    still_counted = still_counted - units_of(entries[i])
    if still_counted + wanted <= limit then
      retry = tonumber(entries[i + 1]) + window - now
      break
    end
  end
  return {0, limit - total, retry, reset}
end
if cost == 0 then
  return {1, limit - total, 0, reset}
end

local units = cost
if newest_at == now then
  units = units + units_of(newest[1])
  redis.call('ZREM', KEYS[1], newest[1])
end
redis.call('ZADD', KEYS[1], int(now), int(now) .. ':' .. int(units))
total = total + cost
redis.call('SET', KEYS[2], int(total))
expire_in(KEYS[1], window)
expire_in(KEYS[2], window)
return {1, limit - total, 0, window}
