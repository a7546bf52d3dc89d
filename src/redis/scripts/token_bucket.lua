-- Token bucket as GCRA. KEYS[1]: the theoretical arrival time (TAT).
-- ARGV[4]: T, microseconds per token. ARGV[5]: tau, microseconds from empty to full.
-- Returns {allowed, remaining, retry after us, reset after us}.
local interval = tonumber(ARGV[4])
local tolerance = tonumber(ARGV[5])

local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local debt = math.max(tat - now, 0)
local available = div(math.max(tolerance - debt, 0), interval)
local after = debt + wanted * interval
if after > tolerance then
  return {0, available, after - tolerance, debt}
end
if cost == 0 then
  return {1, available, 0, debt}
end
redis.call('SET', KEYS[1], int(now + after))
expire_in(KEYS[1], after)
return {1, div(tolerance - after, interval), 0, after}
