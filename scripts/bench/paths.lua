-- paths.lua: a wrk script that cycles through the request paths listed in a file, one per
-- line, and prints the result as one machine-readable line for scripts/bench.sh.
--
-- Environment:
--   BENCH_PATHS  file of paths (required), e.g. /api/v2/public/class/123; a line may add a
--                tab and a token of its own, sent instead of BENCH_TOKEN (the JWT class
--                read: one student's JWT per line)
--   BENCH_TOKEN  when set, sent as "Authorization: Bearer <token>" (nginx and the ceiling
--                ignore it, so every server receives the very same request bytes)
--   BENCH_GZIP   "1" sends "Accept-Encoding: gzip"
--
-- Every request is formatted once in init, so the per-request cost in wrk is an index
-- increment. Each thread starts at its own offset so threads do not walk in step.

local counter = 0
local threads = {}

function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local requests = {}
local n = 0
local i = 0

function init(args)
  local file = os.getenv("BENCH_PATHS")
  if not file then error("BENCH_PATHS is not set") end
  local headers = {}
  local token = os.getenv("BENCH_TOKEN")
  if token and token ~= "" then headers["Authorization"] = "Bearer " .. token end
  if os.getenv("BENCH_GZIP") == "1" then headers["Accept-Encoding"] = "gzip" end
  for line in io.lines(file) do
    if line ~= "" then
      local path, own = line:match("^([^\t]+)\t(.+)$")
      local h = headers
      if own then
        h = {}
        for k, v in pairs(headers) do h[k] = v end
        h["Authorization"] = "Bearer " .. own
      else
        path = line
      end
      n = n + 1
      requests[n] = wrk.format("GET", path, h)
    end
  end
  if n == 0 then error("no paths in " .. file) end
  i = (offset or 0) * 7919 % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return requests[i]
end

-- done prints one line that bench.sh parses: requests per second over the run, latency
-- percentiles in microseconds, and every kind of error (non-2xx/3xx answers are "status").
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH rps=%.1f p50_us=%d p99_us=%d requests=%d duration_us=%d bytes=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99),
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout))
end
