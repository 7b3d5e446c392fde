-- sliding.lua: one decision of the shared sliding-window limit (D23), run atomically by Redis.
--
-- KEYS[1]  the key's log: a sorted set of its accepted requests, each scored by the time it
--          was accepted, in microseconds
-- ARGV[1]  limit: requests accepted in any window
-- ARGV[2]  window, in microseconds
-- ARGV[3]  the member that records this request when it is accepted, unique across edges;
--          empty to only look (nothing is recorded)
-- ARGV[4]  now, in microseconds; empty to read Redis's own clock, the one clock every edge
--          shares
--
-- Returns {allowed (1 or 0), accepted requests in the window after this decision, the time
-- whose leaving the window lets a request in (the oldest when within the limit) or 0, now}. An accepted request returns 0 for the oldest: the edge
-- tells it only with a 429, and every command counts (each costs Redis about 2 µs).
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local member = ARGV[3]
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- A request accepted at t counts while now - t < window: drop those at or before now - window.
-- Scores order the set, so a clock that steps back (a failover to a server whose clock is
-- behind) only makes the requests recorded meanwhile leave the window sooner.
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local held = redis.call('ZCARD', key)
if held < limit and member ~= '' then
  redis.call('ZADD', key, now, member)
  -- The log goes when its newest request leaves the window, so idle keys cost nothing.
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  return {1, held + 1, 0, now}
end

-- A refused request is accepted again once fewer than limit are held: when the
-- (held - limit + 1)-th oldest leaves, a later one than the oldest when the limit was
-- lowered below what the key holds. A look within the limit tells the oldest.
local oldest = 0
if held > 0 then
  local i = math.max(held - limit, 0)
  oldest = tonumber(redis.call('ZRANGE', key, i, i, 'WITHSCORES')[2])
end
local allowed = 0
if held < limit then allowed = 1 end
return {allowed, held, oldest, now}
