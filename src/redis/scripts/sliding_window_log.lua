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

-- Redis expires keys by its own clock, which `now` may be moved ahead of.
local clock_now = now
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
-- Never below 0: a limiter with a lower limit may share the key.
local remaining = math.max(limit - total, 0)
if total + wanted > limit then
  -- Oldest first, a chunk at a time, until enough would have expired: a
  -- refusal reads about as many entries as must expire, not the whole log.
  local retry = 0
  local still_counted = total
  local first = 0
  local found = false
  repeat
    local entries = redis.call('ZRANGE', KEYS[1], first, first + 63, 'WITHSCORES')
    for i = 1, #entries, 2 do
      still_counted = still_counted - units_of(entries[i])
      if still_counted + wanted <= limit then
        retry = tonumber(entries[i + 1]) + window - now
        found = true
        break
      end
    end
    first = first + 64
  until found or #entries < 128
  return {0, remaining, retry, reset}
end
if cost == 0 then
  return {1, remaining, 0, reset}
end

local units = cost
if newest_at == now then
  units = units + units_of(newest[1])
  redis.call('ZREM', KEYS[1], newest[1])
end
redis.call('ZADD', KEYS[1], int(now), int(now) .. ':' .. int(units))
total = total + cost
redis.call('SET', KEYS[2], int(total))
-- Fresh once the newest entry, at `now`, stops counting.
expire_in(KEYS[1], now + window - clock_now)
expire_in(KEYS[2], now + window - clock_now)
return {1, limit - total, 0, window}
