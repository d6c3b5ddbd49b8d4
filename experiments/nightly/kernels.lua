-- The shipped nightly suite: representative points of a memory-bound triad (DRAM-sized and
-- L2-resident), a compute-bound FMA chain and a shared-memory reduction, each measured with the
-- measurement policy and checked against a host reference. About 35 s on an H200.
--
--   gpuexp nightly experiments/nightly          (or run it alone: gpuexp experiments/nightly/kernels.lua)
--
-- GPUEXP_INJECT=kernel=percent (e.g. triad=5) compiles that kernel with EXTRA_WORK_PCT: it does
-- that much more work for the same result. bench/nightly_rule/ uses it to test the regression rule.
local dev = gpuexp.device()
local inject_kernel, inject_pct = (os.getenv("GPUEXP_INJECT") or ""):match("^([%w_]+)=(%d+)$")
local function program_for(kernel)
  local defines = {}
  if kernel == inject_kernel then defines.EXTRA_WORK_PCT = tonumber(inject_pct) end
  return gpuexp.compile{file = "../kernels/nightly.cu", defines = defines} -- found from experiments/
end
local kernels = {triad = program_for("triad"):kernel("triad"), fma_chain = program_for("fma_chain"):kernel("fma_chain"),
  block_sum = program_for("block_sum"):kernel("block_sum")}
if inject_kernel then io.stderr:write(string.format("nightly: injected %s%% more work into %s\n", inject_pct, inject_kernel)) end

local BIG, SMALL = 64 * 1024 * 1024, 1024 * 1024 -- 768 MB of arrays (over 10x the L2), and an L2-resident 12 MB
local a = dev:alloc("f32", BIG)
local b = dev:alloc("f32", BIG):random{seed = 11, min = -1, max = 1}
local c = dev:alloc("f32", BIG):random{seed = 12, min = -1, max = 1}
local sms = gpuexp.plan and 132 or dev.sm_count
local out = dev:alloc("f32", sms * 8 * 512)
local policy = {min_time_ms = 200, max_noise_pct = 0.5, timeout_s = 2}

-- each point: the launch, bytes or FLOPs for a rate, and a check of the result
local cases = {
  triad_dram = {kernel = "triad", n = BIG, bytes = 12 * BIG,
    args = function() return {a, b, c, gpuexp.f32(1.5), gpuexp.u64(BIG), gpuexp.i32(1)} end},
  -- 64 sweeps of 12 MB in one launch: a single 5 us sweep is dominated by the launch's ramp, and
  -- its median moved by up to 12% from one run to the next (bench/nightly_rule/h200/)
  triad_l2 = {kernel = "triad", n = SMALL, bytes = 64 * 12 * SMALL,
    args = function() return {a, b, c, gpuexp.f32(1.5), gpuexp.u64(SMALL), gpuexp.i32(64)} end},
  fma = {kernel = "fma_chain", args = function() return {out, gpuexp.i32(2048), gpuexp.f32(0.999), gpuexp.f32(0.001)} end,
    flops = 16 * 2048},
  block_sum = {kernel = "block_sum", n = 16 * 1024 * 1024, shared = true,
    args = function(block) return {out, b, gpuexp.u64(16 * 1024 * 1024), gpuexp.i32(20)} end},
}

local function check(case, block, grid)
  if gpuexp.plan then return nil end
  if case.kernel == "triad" then
    for _, i in ipairs({1, case.n // 3, case.n}) do
      local expected = b[i] + 1.5 * c[i]
      if math.abs(a[i] - expected) > 1e-5 * (1 + math.abs(expected)) then return false end
    end
    return true
  elseif case.kernel == "block_sum" then
    local sum = 0
    local values = b:to_table(1, block)
    for _, v in ipairs(values) do sum = sum + v end
    return math.abs(out[1] - sum) < 1e-3 * (1 + math.abs(sum))
  end
  return out[1] == out[1] -- the FMA chain: a number, not NaN
end

gpuexp.sweep{
  name = "nightly_kernels",
  axes = {{"case", {"triad_dram", "triad_l2", "fma", "block_sum"}}, {"block_size", {128, 256, 512}}},
  columns = {"kernel", "grid", "median_ms", "min_ms", "noise_pct", "samples", "mode", "stop_reason", "sm_clock_mhz",
    "clock_throttled", "throttled_samples", "median_cycles", "gbps", "gflops", "verified"},
  run = function(p)
    local case = cases[p.case]
    local grid = case.n and math.min((case.n + p.block_size - 1) // p.block_size, sms * 32) or sms * 8 * 512 // p.block_size
    if case.kernel == "block_sum" then grid = case.n // p.block_size end
    local launch = {grid = grid, block = p.block_size, args = case.args(p.block_size),
      shared = case.shared and 4 * p.block_size or 0}
    local kernel = kernels[case.kernel]
    kernel:launch(launch)
    local verified = check(case, p.block_size, grid)
    local spec = {}
    for k, v in pairs(policy) do spec[k] = v end
    for k, v in pairs(launch) do spec[k] = v end
    local t = kernel:measure(spec)
    local threads = grid * p.block_size
    return {
      kernel = case.kernel, grid = grid, median_ms = t.median_ms, min_ms = t.min_ms, noise_pct = t.noise_pct,
      samples = t.samples, mode = t.mode, stop_reason = t.stop_reason, sm_clock_mhz = t.sm_clock_mhz,
      clock_throttled = t.clock_throttled, throttled_samples = t.throttled_samples, median_cycles = t.median_cycles,
      samples_ms = t.samples_ms,
      gbps = case.bytes and t.median_ms and case.bytes / (t.median_ms * 1e-3) / 1e9,
      gflops = case.flops and t.median_ms and case.flops * threads / (t.median_ms * 1e-3) / 1e9,
      verified = verified, status = verified == false and "wrong" or "ok",
    }
  end,
}
