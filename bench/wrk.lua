-- wrk script: one request shape from env (BENCH_METHOD, BENCH_PATH, BENCH_BODY, BENCH_HEADERS as
-- "name: value|name: value"), with a unique X-Request-ID per request unless the shape has one (a
-- signed request, whose signature covers it).
--
-- BENCH_POOL names a file of pre-signed requests, one a line: "<X-Request-ID>\t<x-jws-signature>",
-- sent in turn (the same body and Digest for all); past its end the pool starts again, and the
-- gateway's replay counter shows it (the bench counts those rounds as invalid).
-- BENCH_SEED (8 hex digits, new per wrk process) starts every generated X-Request-ID, so that no
-- two rounds send the same id: wrk's Lua random generator starts from the same seed every time.
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/"
local body = os.getenv("BENCH_BODY")
local seed = tonumber(os.getenv("BENCH_SEED") or "0", 16) or 0
local headers = {}
for pair in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^|]+") do
  local name, value = string.match(pair, "^%s*([^:]+):%s*(.*)$")
  if name then headers[name] = value end
end
local counter = 0

local pool = {}
local pool_file = os.getenv("BENCH_POOL")
if pool_file and pool_file ~= "" then
  for line in io.lines(pool_file) do
    local id, signature = string.match(line, "^([^\t]+)\t(.+)$")
    if id then pool[#pool + 1] = { id, signature } end
  end
end

local fixed_id = headers["X-Request-ID"] or headers["x-request-id"]
math.randomseed(seed)

function request()
  counter = counter + 1
  if #pool > 0 then
    local entry = pool[(counter - 1) % #pool + 1]
    headers["x-request-id"] = entry[1]
    headers["x-jws-signature"] = entry[2]
    return wrk.format(method, path, headers, body)
  end
  if fixed_id then return wrk.format(method, path, headers, body) end
  headers["X-Request-ID"] = string.format("%08x-%04x-4%03x-8%03x-%012x",
    seed, math.random(0, 0xffff), math.random(0, 0xfff), math.random(0, 0xfff), counter)
  return wrk.format(method, path, headers, body)
end

-- summary.errors.status: answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses").
function done(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format("BENCH requests=%d seconds=%.3f p50=%.3f p99=%.3f non2xx=%d sockerr=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
