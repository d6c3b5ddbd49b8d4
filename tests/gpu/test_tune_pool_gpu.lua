-- gpuexp.tune's compile pool on the GPU: 24 configurations of a kernel, each its own NVRTC compile,
-- tuned from an empty cubin cache. The helpers compile offline for the GPU's architecture; the
-- measuring process must then find every configuration in the cache (the same key: a compile in
-- run takes under 50 ms, where a real one takes hundreds), having waited only for what a helper was
-- still on. Without the pool (compile_workers = 0, another empty cache) run compiles each itself.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
ws.write("pool.lua", [[
local source = [=[
extern "C" __global__ void scale(float *y, const float *x, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
  #pragma unroll
  for (int u = 0; u < UNROLL; ++u) if (i + u < n) y[i + u] = VARIANT * x[i + u];
}]=]
local n = 1 << 22
gpuexp.measure_defaults.min_time_ms = 20
gpuexp.measure_defaults.timeout_s = 0.2
local dev = gpuexp.device()
local x, y = dev:alloc("f32", n), dev:alloc("f32", n)
local function build(p)
  return {source = source, name = "scale.cu", defines = {UNROLL = p.unroll, VARIANT = p.variant .. ".0f"}}
end
local log = gpuexp.script_dir .. "/compile_ms.txt"
local r = gpuexp.tune{name = "pool", quiet = true, strategy = "brute", compile = build,
  compile_workers = tonumber(arg[1]),
  axes = {{"unroll", {1, 2, 4, 8}}, {"variant", {1, 2, 3, 4, 5, 6}}}, out = gpuexp.script_dir .. "/" .. arg[2] .. ".csv",
  run = function(p)
    local started = gpuexp.clock()
    local kernel = gpuexp.compile(build(p)):kernel("scale")
    local f = io.open(log, "a"); f:write(string.format("%.1f\n", 1000 * (gpuexp.clock() - started))); f:close()
    local t = kernel:measure{grid = (n // p.unroll + 255) // 256, block = 256, args = {y, x, gpuexp.i32(n)}}
    return {median_ms = t.median_ms, samples_ms = t.samples_ms}
  end}
local c = r.compile or {jobs = 0, missed = 0, wait_s = 0}
print(string.format("JOBS %d MISSED %d WAIT %.2f WALL %.2f", c.jobs, c.missed, c.wait_s, r.wall_s))
]])
local function median_compile_ms()
  local list = {}
  for v in (ws.read("compile_ms.txt") or ""):gmatch("(%S+)\n") do list[#list + 1] = tonumber(v) end
  os.remove(ws.dir .. "/compile_ms.txt")
  return #list, #list > 0 and gpuexp.stats(list).median or nil
end

local code, out, err = ws.run("--quiet pool.lua 8 pooled", "GPUEXP_CACHE_DIR=" .. ws.dir .. "/cache1")
T.eq(code, 0, "the tune with a pool runs: " .. err)
T.ok(out:find("compiled ahead: 24 configuration", 1, true), "the pool compiled the 24: " .. out)
local missed = tonumber(out:match("MISSED (%d+)"))
T.ok(missed and missed <= 2, "the measuring process compiled at most 2 itself: " .. out)
local calls, pooled_ms = median_compile_ms()
T.eq(calls, 24, "run compiled each configuration once")
T.ok(pooled_ms < 50, string.format("and found it in the cache the helpers filled (median %.1f ms a compile call)",
  pooled_ms))

code, out, err = ws.run("--quiet pool.lua 0 serial", "GPUEXP_CACHE_DIR=" .. ws.dir .. "/cache2")
T.eq(code, 0, "the tune without a pool runs: " .. err)
local _, serial_ms = median_compile_ms()
T.ok(serial_ms > 2 * pooled_ms, string.format("without the pool each compile is real: %.1f ms against %.1f ms",
  serial_ms, pooled_ms))
print(string.format("compile call in run: %.1f ms with the pool, %.1f ms without", pooled_ms, serial_ms))
T.done()
