-- Sliding window counter: pass when prev*(W - e) + (cur + n)*W <= limit*W.
-- KEYS[1]: hash {i = current window number, p = previous count, c = current count}.
-- ARGV[4]: W in time units. ARGV[5]: the limit. ARGV[6]: microseconds per time unit,
-- chosen so that 3*limit*W stays below 2^53.
-- Returns {allowed, remaining, retry after us, reset after us}.
local window = tonumber(ARGV[4])
local limit = tonumber(ARGV[5])
local unit = tonumber(ARGV[6])

local t = div(now, unit)
local index = div(t, window)
local elapsed = t - index * window
local lead = 0
local prev, cur = 0, 0
local stored = redis.call('HMGET', KEYS[1], 'i', 'p', 'c')
if stored[1] and stored[2] and stored[3] then
  local si, sp, sc = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
  if sp > 0 or sc > 0 then
    if si == index then
      prev, cur = sp, sc
    elseif si == index - 1 then
      prev = sc
    elseif si > index then
      -- A later window than ours was stored: use it, from its start.
      lead = si * window - t
      index, elapsed, prev, cur = si, 0, sp, sc
    end
  end
end

local function fits(p, c)
  return p * (window - elapsed) + c * window <= limit * window
end

local function remaining(p, c)
  local room = div(math.max(limit * window - p * (window - elapsed), 0), window)
  return math.max(room - c, 0)
end

-- The smallest offset e into a window with p * (W - e) <= (limit - extra) * W.
local function earliest_fit(p, extra)
  local room = limit - extra
  if room < 0 then
    return nil
  end
  if p == 0 then
    return 0
  end
  return window - math.min(div(room * window, p), window)
end

local function reset_after(p, c)
  local to_end = lead + window - elapsed
  if c > 0 then
    return to_end + window
  elseif p > 0 then
    return to_end
  end
  return 0
end

local function retry_after(p, c, n)
  local to_end = lead + window - elapsed
  local at = earliest_fit(p, c + n)
  if at and at < window then
    return lead + math.max(at - elapsed, 0)
  end
  -- Next window: the current count becomes the weighted one.
  return to_end + (earliest_fit(c, n) or window)
end

if not fits(prev, cur + wanted) then
  return {0, remaining(prev, cur), retry_after(prev, cur, wanted) * unit,
    reset_after(prev, cur) * unit}
end
if cost == 0 then
  return {1, remaining(prev, cur), 0, reset_after(prev, cur) * unit}
end
cur = cur + cost
redis.call('HSET', KEYS[1], 'i', int(index), 'p', int(prev), 'c', int(cur))
local reset = reset_after(prev, cur) * unit
expire_in(KEYS[1], reset)
return {1, remaining(prev, cur), 0, reset}
