-- wrk script of the SSE benchmark: each request is a streaming chat completion POST carrying X-API-Key of
-- one of N clients, in turn (N = first script argument). The third argument is the JSON body. Requests are
-- built once, in init, so the script costs wrk next to nothing. done() prints the line the driver reads.
local requests = {}
local count = 0
local next_index = 0

function init(args)
  count = tonumber(args[1]) or 10000
  local prefix = args[2] or "client-"
  local body = args[3]
  for i = 0, count - 1 do
    requests[i] = wrk.format("POST", nil, {
      ["X-API-Key"] = string.format("%s%05d", prefix, i),
      ["Content-Type"] = "application/json",
      ["Accept"] = "text/event-stream",
    }, body)
  end
  next_index = math.random(0, count - 1)
end

function request()
  local r = requests[next_index]
  next_index = (next_index + 1) % count
  return r
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRK_RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d mean_us=%.1f status_errors=%d connect_errors=%d read_errors=%d write_errors=%d timeouts=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,
    e.status, e.connect, e.read, e.write, e.timeout))
end
