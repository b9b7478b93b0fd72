-- wrk script for the response cache (issue 16): a share of the requests (BENCH_REPEAT, default 0.9) is one of
-- the ten digits images of test/fixtures/digits_samples.json (written out below as JSON bodies), the rest a
-- fresh random image (pixels 0 to 16), for the input BENCH_INPUT_NAME (default INPUT; digits_torch: INPUT__0).
-- BENCH_BINARY=1 sends them with the binary data extension (BENCH_OUTPUT_NAME, default PROBABILITIES, asked
-- for as binary data). BENCH_REPEAT=1 sends only the ten images: once each is cached, every request is a hit.
-- BENCH_FIXED=1 sends the first image only, as wrk's fixed body (no Lua call per request: what wrk costs
-- without the mix).
--
--   wrk -t1 -c8 -d5s -s bench/response-cache-mix.lua http://127.0.0.1:8000/v2/models/digits/infer
--
-- against a server whose model has `response_cache { enable: true }`, with and without
-- --cache-config local,size=16777216 (bench/response-cache.ts runs it so; docs/benchmarks.md, "The response
-- cache and the rate limiter"). At the end it prints one line `BENCH_JSON {...}` (counts, latencies in µs).
local bodies = {
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,4,12,5,0,0,0,0,0,12,14,15,7,0,0,0,2,14,1,2,16,0,0,0,4,8,0,0,10,4,0,0,7,8,0,0,6,8,0,0,4,11,0,0,5,8,0,0,0,14,11,3,13,5,0,0,0,2,11,16,11,0,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,0,3,12,12,2,0,0,0,7,15,16,16,0,0,0,4,15,9,14,16,3,0,0,2,0,0,14,16,0,0,0,0,0,0,14,16,0,0,0,0,0,0,15,13,0,0,0,0,0,0,16,14,1,0,0,0,0,3,16,13,2,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,3,15,16,8,0,0,0,0,14,13,10,16,2,0,0,0,5,3,2,16,2,0,0,0,0,0,3,16,2,0,0,0,0,0,9,12,0,0,0,0,0,1,16,8,0,2,0,0,0,8,16,14,16,15,0,0,2,16,16,15,12,9,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,13,16,16,5,0,0,0,5,15,6,11,13,0,0,0,0,2,2,13,8,0,0,0,0,4,16,15,2,0,0,0,0,3,11,15,16,5,0,0,0,0,0,2,15,11,0,0,0,3,4,9,16,6,0,0,0,15,16,16,10,0,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,0,7,13,0,0,0,0,0,0,14,6,0,0,0,0,0,10,10,2,6,0,0,0,3,16,3,9,13,2,0,0,11,12,6,14,16,10,0,0,11,16,16,16,10,3,0,0,2,8,10,16,1,0,0,0,0,0,9,13,0,0,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,9,12,12,13,7,0,0,0,15,5,5,4,2,0,0,4,15,10,4,0,0,0,0,2,11,11,15,11,0,0,0,0,0,0,0,10,5,0,0,0,0,0,0,7,7,0,0,5,11,4,5,14,1,0,0,0,9,16,13,3,0,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,0,13,3,0,0,0,0,0,6,15,0,0,0,0,0,0,12,7,0,0,0,0,0,0,16,10,7,1,0,0,0,6,16,12,13,16,6,0,0,0,16,4,0,6,12,0,0,0,12,10,2,11,9,0,0,0,1,13,16,15,3,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,2,13,16,14,1,0,0,0,11,12,7,16,3,0,0,0,9,3,2,16,3,0,0,0,0,0,9,11,0,0,0,0,2,11,15,13,3,0,0,0,4,15,16,13,3,0,0,0,0,14,8,0,0,0,0,0,5,15,4,0,0,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,3,12,16,9,0,0,0,0,12,9,13,16,9,0,0,3,16,5,0,8,12,0,0,0,9,16,10,13,2,0,0,0,0,4,16,12,0,0,0,0,0,11,9,16,0,0,0,0,1,15,2,12,0,0,0,0,2,16,16,6,0,0]}]}',
  '{"inputs":[{"name":"INPUT","shape":[1,64],"datatype":"FP32","data":[0,0,5,13,14,5,0,0,0,2,15,6,11,15,1,0,0,1,16,5,8,16,4,0,0,0,4,12,9,13,8,0,0,0,0,0,0,8,8,0,0,0,0,0,0,11,7,0,0,0,7,7,5,15,2,0,0,0,5,15,16,7,0,0]}]}'
}
local repeat_share = tonumber(os.getenv("BENCH_REPEAT") or "0.9")
-- LuaJIT's generator starts from the same seed in every run: without a seed of its own, each run would
-- send the "fresh" images of the run before, which the cache then holds (more hits than the share says).
local urandom = io.open("/dev/urandom", "rb")
local seed = 0
for byte in urandom:read(4):gmatch(".") do seed = seed * 256 + byte:byte() end
urandom:close()
math.randomseed(seed)
local input_name = os.getenv("BENCH_INPUT_NAME") or "INPUT"
for i = 1, #bodies do bodies[i] = bodies[i]:gsub('"name":"INPUT"', '"name":"' .. input_name .. '"', 1) end
local fresh_body
-- BENCH_BINARY=1 sends the same images with the binary data extension, as perf_analyzer and tritonclient do
-- by default: a JSON header naming the input's 256 bytes and asking for the output as binary data.
if os.getenv("BENCH_BINARY") == "1" then
  local output_name = os.getenv("BENCH_OUTPUT_NAME") or "PROBABILITIES"
  local header = '{"inputs":[{"name":"' .. input_name .. '","shape":[1,64],"datatype":"FP32","parameters":{"binary_data_size":256}}],'
    .. '"outputs":[{"name":"' .. output_name .. '","parameters":{"binary_data":true}}]}'
  -- The little-endian FP32 bytes of the pixel values 0 to 16.
  local pixel_bytes = {}
  for value = 0, 16 do
    local exponent, bits = 0, 0
    if value > 0 then
      exponent = math.floor(math.log(value) / math.log(2))
      bits = (127 + exponent) * 8388608 + (value / 2 ^ exponent - 1) * 8388608
    end
    pixel_bytes[value] = string.char(bits % 256, math.floor(bits / 256) % 256, math.floor(bits / 65536) % 256, math.floor(bits / 16777216) % 256)
  end
  local binary_body = function(pixels)
    local parts = {}
    for i = 1, 64 do parts[i] = pixel_bytes[pixels[i]] end
    return header .. table.concat(parts)
  end
  for i = 1, #bodies do
    local pixels = {}
    for number in bodies[i]:match('"data":%[([^%]]*)%]'):gmatch("[0-9]+") do pixels[#pixels + 1] = tonumber(number) end
    bodies[i] = binary_body(pixels)
  end
  wrk.headers["Inference-Header-Content-Length"] = tostring(#header)
  fresh_body = function()
    local pixels = {}
    for i = 1, 64 do pixels[i] = math.random(0, 16) end
    return binary_body(pixels)
  end
else
  wrk.headers["Content-Type"] = "application/json"
  fresh_body = function()
    local pixels = {}
    for i = 1, 64 do pixels[i] = tostring(math.random(0, 16)) end
    return '{"inputs":[{"name":"' .. input_name .. '","shape":[1,64],"datatype":"FP32","data":[' .. table.concat(pixels, ",") .. ']}]}'
  end
end
wrk.method = "POST"
if os.getenv("BENCH_FIXED") == "1" then
  wrk.body = bodies[1]
else
  request = function()
    if math.random() < repeat_share then
      return wrk.format(nil, nil, nil, bodies[math.random(#bodies)])
    end
    return wrk.format(nil, nil, nil, fresh_body())
  end
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%.1f,"p99_us":%.1f,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect + errors.read + errors.write + errors.status + errors.timeout))
end
