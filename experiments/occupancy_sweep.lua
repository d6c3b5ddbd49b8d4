-- Seed 000 (Mojo GPU Puzzles #31): does occupancy move a memory-bound kernel?
-- Four SAXPY kernels (y = alpha * x + y) with very different registers and shared memory, swept
-- over block sizes on 32M elements. Each point: resources, theoretical occupancy (driver),
-- event-timed median, effective bandwidth (12 bytes per element: read x, read y, write y)
-- and the result checked against a reference.
--
--   gpuexp experiments/occupancy_sweep.lua [elements]

local N = math.tointeger(tonumber(arg[1] or "")) or 32 * 1024 * 1024
local ALPHA = 2.5
local BYTES_PER_ELEMENT = 12

local variants = {
  -- elements per thread, and the tolerance of each kernel's arithmetic against alpha * x + y
  minimal = {per_thread = 1, rtol = 1e-6},
  balanced = {per_thread = 1, rtol = 1e-4},
  sophisticated = {per_thread = 1, rtol = 1e-3},
  vectorized = {per_thread = 4, rtol = 1e-6},
}
local variant_order = {"minimal", "balanced", "sophisticated", "vectorized"}

-- With --arch (or no GPU) this is an offline plan: the same calls, occupancy from the model,
-- no timing and no verification.
local plan = gpuexp.plan
local dev = gpuexp.device()
local facts = dev.facts
local program = gpuexp.compile{file = "kernels/saxpy.cu"}
-- a plan knows the architecture, not a GPU's SM count
local gpu = facts.sm_count and string.format("%s (%s, %d SMs)", facts.name, facts.arch, facts.sm_count) or facts.name
io.stderr:write(string.format("%s, %d elements (%.0f MB per array), kernels %s\n", gpu, N, N * 4 / 1e6,
  program.cache_hit and "from the cache" or "compiled"))

local x = dev:alloc("f32", N):random{seed = 1, min = -1, max = 1}
local y_initial = dev:alloc("f32", N):random{seed = 2, min = -1, max = 1}
local y = dev:alloc("f32", N)
-- host copies for the reference check
local host_x = gpuexp.host("f32", N, {pinned = true}):copy_from(x)
local host_y = gpuexp.host("f32", N, {pinned = true}):copy_from(y_initial)
local host_out = gpuexp.host("f32", N, {pinned = true})

-- Checks y against alpha * x + y_initial in double precision at 65536 seeded random indices
-- plus both ends; returns ok and the largest relative error seen.
local function verify(rtol)
  host_out:copy_from(y)
  local worst, ok = 0, true
  local rng_state = 12345
  local function check(i)
    local expected = ALPHA * host_x[i] + host_y[i]
    local got = host_out[i]
    local err = math.abs(got - expected)
    local rel = err / math.max(math.abs(expected), 1e-30)
    if rel > worst then worst = rel end
    if not (err <= 1e-6 + rtol * math.abs(expected)) then ok = false end
  end
  check(1); check(N)
  for _ = 1, 65536 do
    rng_state = (rng_state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    check(1 + (rng_state >> 20) % N)
  end
  return ok, worst
end

-- the measured copy ceiling of this GPU (gpuexp calibrate, cached), beside the datasheet-style peak
local ceilings = not plan and gpuexp.calibrate{} or nil

local kernels = {}
for _, name in ipairs(variant_order) do kernels[name] = program:kernel(name) end

local rows, path = gpuexp.sweep{
  name = "occupancy_sweep",
  axes = {{"variant", variant_order}, {"block_size", {64, 128, 256, 512, 1024}}},
  columns = {"registers", "static_shared_bytes", "spill_bytes", "grid", "active_blocks_per_sm",
    "theoretical_occupancy_pct", "limiter", "achieved_occupancy_pct", "median_ms", "min_ms", "noise_pct", "samples",
    "effective_gbps", "pct_of_peak_dram", "pct_of_copy_ceiling", "dram_throughput_pct", "verified", "max_rel_error"},
  meta = {elements = N, alpha = ALPHA, bytes_per_element = BYTES_PER_ELEMENT,
    peak_dram_gbps = facts.peak_dram_gbps, peak_source = "derived: 2 x memory clock x bus width",
    copy_ceiling_gbps = ceilings and ceilings.dram_copy_gbps,
    copy_ceiling_source = ceilings and ("gpuexp calibrate, " .. ceilings.dram_copy_method .. ", " .. ceilings.measured_utc)},
  run = function(p)
    local variant = variants[p.variant]
    local kernel = kernels[p.variant]
    local threads = (N + variant.per_thread - 1) // variant.per_thread
    local grid = (threads + p.block_size - 1) // p.block_size
    local args = {y, x, gpuexp.f32(ALPHA), gpuexp.i32(N)}
    local resources = kernel:resources()
    local occupancy = kernel:occupancy{block = p.block_size}

    y:copy_from(y_initial)
    kernel:launch{grid = grid, block = p.block_size, args = args}
    local verified, max_rel
    if not plan then verified, max_rel = verify(variant.rtol) end

    local t = kernel:time{grid = grid, block = p.block_size, args = args, warmup = 10, reps = 200}
    local gbps = t.median_ms and N * BYTES_PER_ELEMENT / (t.median_ms * 1e-3) / 1e9
    -- hardware counters, in separate replay passes (never the timed runs)
    local m, why = kernel:metrics{grid = grid, block = p.block_size, args = args,
      metrics = {"occupancy", "dram__throughput.avg.pct_of_peak_sustained_elapsed"}}
    return {
      achieved_occupancy_pct = m and m.achieved_occupancy_pct,
      dram_throughput_pct = m and m["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
      status = (m or plan) and "ok" or "no_metrics", error = not plan and why or nil,
      registers = resources.registers, static_shared_bytes = resources.static_shared_bytes,
      spill_bytes = resources.spill_store_bytes + resources.spill_load_bytes, grid = grid,
      active_blocks_per_sm = occupancy.active_blocks_per_sm, theoretical_occupancy_pct = occupancy.occupancy_pct,
      limiter = occupancy.limiter,
      median_ms = t.median_ms, min_ms = t.min_ms, noise_pct = t.noise_pct, samples = t.samples,
      effective_gbps = gbps, pct_of_peak_dram = gbps and 100 * gbps / facts.peak_dram_gbps,
      pct_of_copy_ceiling = gbps and 100 * gbps / ceilings.dram_copy_gbps,
      verified = verified, max_rel_error = max_rel,
    }
  end,
}

if plan then
  print(string.format("OFFLINE PLAN for %s: occupancy from the model and the ptxas report; nothing was timed", facts.arch))
  gpuexp.print_table(rows, {"variant", "block_size", "registers", "static_shared_bytes", "active_blocks_per_sm",
    "theoretical_occupancy_pct", "limiter", "status"})
  print("wrote " .. path .. " (timing columns empty: a plan)")
  return
end
gpuexp.print_table(rows, {"variant", "block_size", "registers", "static_shared_bytes", "active_blocks_per_sm",
  "theoretical_occupancy_pct", "limiter", "achieved_occupancy_pct", "median_ms", "noise_pct", "effective_gbps",
  "pct_of_peak_dram", "pct_of_copy_ceiling", "dram_throughput_pct", "verified", "status"})
print("wrote " .. path)

-- The lesson, checked on this run's numbers rather than asserted.
local best, occupancy_range = {}, {}
local failures = 0
for _, row in ipairs(rows) do
  if row.status ~= "ok" and row.status ~= "no_metrics" then
    failures = failures + 1
  else
    if not row.verified then failures = failures + 1 end
    local b = best[row.variant]
    if not b or row.effective_gbps > b.effective_gbps then best[row.variant] = row end
    local r = occupancy_range[row.variant] or {min = math.huge, max = -math.huge}
    r.min = math.min(r.min, row.theoretical_occupancy_pct)
    r.max = math.max(r.max, row.theoretical_occupancy_pct)
    occupancy_range[row.variant] = r
  end
end
print("\nbest block size per variant:")
for _, name in ipairs(variant_order) do
  local b = best[name]
  if b then
    print(string.format("  %-14s block %4d  %7.1f GB/s  %5.1f%% of the derived peak, %5.1f%% of the measured copy ceiling  (theoretical occupancy %.0f-%.0f%% over the sweep)",
      name, b.block_size, b.effective_gbps, b.pct_of_peak_dram, b.pct_of_copy_ceiling, occupancy_range[name].min,
      occupancy_range[name].max))
  end
end
if best.minimal and best.vectorized and best.sophisticated then
  local width_gain = best.vectorized.effective_gbps / best.minimal.effective_gbps - 1
  local scalar_spread = math.abs(best.sophisticated.effective_gbps / best.minimal.effective_gbps - 1)
  print(string.format("\nlesson: 16-byte accesses (vectorized) vs 4-byte (minimal): %+.1f%% bandwidth; " ..
    "the scalar kernels' best results differ by %.1f%% despite their different occupancy.", 100 * width_gain,
    100 * scalar_spread))
  if width_gain > scalar_spread then
    print("held on this GPU: access width moved this memory-bound kernel more than occupancy did.")
  else
    print("did NOT hold on this GPU: access width moved bandwidth less than the differences between the scalar kernels.")
  end
end
if failures > 0 then
  gpuexp.error("usage", string.format("%d point(s) failed or did not verify; see the status and verified columns of %s",
    failures, path))
end
