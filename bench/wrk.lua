-- wrk script: one request shape from env (BENCH_METHOD, BENCH_PATH, BENCH_BODY, BENCH_HEADERS as
-- "name: value|name: value"), with a unique X-Request-ID per request unless the shape has one (a
-- signed request, whose signature covers it).
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/"
local body = os.getenv("BENCH_BODY")
local headers = {}
for pair in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^|]+") do
  local name, value = string.match(pair, "^%s*([^:]+):%s*(.*)$")
  if name then headers[name] = value end
end
local counter = 0

local fixed_id = headers["X-Request-ID"] or headers["x-request-id"]

function request()
  counter = counter + 1
  if fixed_id then return wrk.format(method, path, headers, body) end
  headers["X-Request-ID"] = string.format("%08x-%04x-4%03x-8%03x-%012x",
    math.random(0, 0x7fffffff), math.random(0, 0xffff), math.random(0, 0xfff),
    math.random(0, 0xfff), counter)
  return wrk.format(method, path, headers, body)
end

function done(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format("BENCH requests=%d seconds=%.3f p50=%.3f p99=%.3f non2xx=%d sockerr=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
