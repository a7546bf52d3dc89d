-- Shared by every tollgate script.
-- ARGV[1]: the time in microseconds, or '' to read the server's TIME.
-- ARGV[2]: the cost (0 is a peek).
-- ARGV[3]: the shortest key lifetime in milliseconds (0 unless the time is injected).
-- Every figure stays below 2^53, so Lua's doubles hold it exactly. Needs Redis 6.0+
-- (scripts replicated by effect, so TIME before a write is safe; SET KEEPTTL).
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[1])
end
local cost = tonumber(ARGV[2])
local min_ttl_ms = tonumber(ARGV[3])
local wanted = math.max(cost, 1)

-- An integer as text, never in exponent form.
local function int(x)
  return string.format('%.0f', x)
end

-- floor(a / b) for non-negative integers, corrected for rounding.
local function div(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

-- Keeps `key` exactly as long as its state differs from a fresh one.
local function expire_in(key, micros)
  local ms = math.max(math.ceil(micros / 1000), min_ttl_ms, 1)
  redis.call('PEXPIRE', key, int(ms))
end
