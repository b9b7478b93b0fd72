-- wrk script: POSTs one KServe v2 binary inference request, the same bytes every time, and at the end
-- prints one line `BENCH_JSON {...}` with the counts and latency percentiles (microseconds) that
-- bench/batching/run.ts reads.
--
--   BENCH_BODY_FILE=body.bin BENCH_HEADER_LENGTH=123 \
--     wrk -t1 -c32 -d10s --timeout 60s -s bench/batching/infer.lua http://127.0.0.1:8000/v2/models/mlp_batch/infer
--
-- BENCH_BODY_FILE: the whole request body (JSON header, then the binary input);
-- BENCH_HEADER_LENGTH: the JSON header's length in bytes (the Inference-Header-Content-Length header).
-- wrk adds Content-Length itself. Non-2xx answers count in errors.status.

local body_file = os.getenv("BENCH_BODY_FILE")
local header_length = os.getenv("BENCH_HEADER_LENGTH")
if body_file == nil or header_length == nil then
  error("infer.lua: set BENCH_BODY_FILE (request body) and BENCH_HEADER_LENGTH (its JSON header's length)")
end
local file = assert(io.open(body_file, "rb"))
local body = file:read("*a")
file:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["Inference-Header-Content-Length"] = header_length

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"mean_us":%.1f,"p50_us":%.1f,"p90_us":%.1f,"p99_us":%.1f,"max_us":%.1f,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.bytes, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout))
end
