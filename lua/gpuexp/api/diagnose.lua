-- A diagnosis of one kernel launch, in the spirit of seed 004's "stall distribution as
-- fingerprint": Speed of Light first (compute and memory throughput as % of peak), then the
-- dominant stalls, achieved against theoretical occupancy with its limiter, arithmetic intensity
-- against the measured knee, the launch's shape against the SMs, and the telltales of known
-- problems (contended atomics, bank conflicts, spills, local memory, uncoalesced accesses, too few
-- blocks, barriers, divergence, FP64 arithmetic). Ends in a one-line verdict with its evidence and
-- a price tag: the speedup to expect if the problem it names were fixed, with an interval (M.price:
-- a function of the collected values alone, so a stored diagnosis can be priced again offline).
-- No verdict rests on counts too small to mean anything: a ratio of counts (sectors per request,
-- wavefronts per request, local or global accesses) is evidence only when its count is at least
-- M.FLOOR.count and M.FLOOR.share of the memory instructions; below, the evidence says so.
-- A kernel that is latency-bound (neither unit near its peak) is short of warps in flight (Little's
-- law); when what withholds them is known, that is the verdict: a grid of half a wave or less (too
-- few blocks), a last wave that leaves SMs idle (a tail wave), or a theoretical occupancy of half
-- or less with its limiter (registers, shared memory, the block size).
local metrics = require("gpuexp.api.metrics")

local M = {}

local STALL = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"

M.names = {
  "sm__throughput.avg.pct_of_peak_sustained_elapsed",                 -- compute SoL
  "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", -- memory SoL
  "dram__throughput.avg.pct_of_peak_sustained_elapsed",
  "lts__t_sector_hit_rate.pct",
  "sm__warps_active.avg.pct_of_peak_sustained_active",
  "smsp__average_thread_inst_executed_per_inst_executed.ratio",
  "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", -- useful bytes of the sectors loads fetch
  "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct", -- and of the sectors stores write
  "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum", -- what those rest on
  "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
  "smsp__inst_executed.sum", "gpu__time_duration.sum", "dram__bytes.sum",
  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
  "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
  "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
  "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
  -- local memory (spills, per-thread arrays indexed at run time), the FP64 pipe against FP32's
  -- rate, and the SMs' share of cycles with work
  "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
  "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
  "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
  "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
  "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
  "smsp__issue_active.avg.per_cycle_active", -- the issue slots used: what more warps could fill (the occupancy's price)
}

-- The floor under which a count is no evidence: at least `count`, and `share` of the memory
-- instructions (global, shared and local accesses and atomics: a ratio about memory accesses is
-- weighed against the memory accesses, not against the arithmetic between them; a kernel that
-- reads no global memory has a sector use of 0% from a handful of loads, which once read "read
-- amplification 100x"). Without those counts, the warp instructions.
M.FLOOR = {count = 1024, share = 0.01}
M.MEMORY_INSTRUCTIONS = {"smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
  "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
  "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
  "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"}
-- The SoL under which a kernel is latency-bound (no unit near its peak: memory- and compute-bound
-- start there), and the share of the warps an SM could hold that a launch or a limiter must
-- withhold to be the verdict: half (the warps in flight at most halved, so a fix at least
-- doubles them).
M.BOUND_PCT = 60
M.WARPS_WITHHELD = 0.5
M.LIMITER_BINDS = 0.25 -- the achieved share of the theoretical occupancy at which the limiter binds
-- A tail wave is the verdict when its potential cost, 1 / (whole waves + 1) of the time, is at
-- least this (ncu's LaunchConfiguration rule: 0.2, up to 4 whole waves).
M.TAIL_EFFECT = 0.2
-- the shares above which a barrier, and the FP64 pipe, are a verdict
M.BARRIER_PCT = 15
M.BARRIER_DOMINANT_PCT = 40 -- the top stall, at least this share: a verdict whatever the SoL
M.FP64_PIPE_PCT = 40

-- The threads of a block ({x, y, z} or a number), and the lanes its warps start with on average
-- (a block of 1 thread has warps of 1 lane: one thread per instruction is not divergence there).
local function block_threads(block)
  return type(block) == "table" and (block[1] or block.x or 1) * (block[2] or block.y or 1) * (block[3] or block.z or 1)
    or tonumber(block) or 32
end
local function launch_lanes(block)
  local threads = block_threads(block)
  return threads / math.ceil(threads / 32)
end

local function grid_blocks(grid)
  if type(grid) == "table" then return (grid[1] or grid.x or 1) * (grid[2] or grid.y or 1) * (grid[3] or grid.z or 1) end
  return tonumber(grid)
end

-- The resource an occupancy limiter names (the model's limiter: "registers", "shared", "blocks",
-- "warps", or several joined by "+"), as the verdict says it; nil for the warps alone (a block
-- size the SM's warp slots divide: nothing to fix).
local LIMITED_BY = {{"registers", "registers"}, {"shared", "shared memory"}, {"blocks", "the block size"}}
local function limiter_words(limiter)
  if type(limiter) ~= "string" then return nil end
  local words = {}
  for _, pair in ipairs(LIMITED_BY) do
    if limiter:find(pair[1], 1, true) then words[#words + 1] = pair[2] end
  end
  return #words > 0 and table.concat(words, " and ") or nil
end

-- The price tag of a verdict: the fraction f of the kernel's time the fix would remove, from the
-- findings (so from the collected values alone), with an uncertainty u; the speedup s is
-- 1 / (1 - f) (f at most MAX_FRACTION), its interval s^(1 - u) .. s^(1 + u): u is the model's
-- relative uncertainty on the logarithm of the speedup. Each model
-- (M.PRICES, docs/explanation/diagnose-and-counters.md) says what it assumes. The corpus of
-- causes measures the realized gains against it (rank correlation, interval coverage).
M.MAX_FRACTION = 0.995 -- (200x: the estimate's end; contended atomics cost that much and more)
local function share_of(f, ...)
  local total = 0
  for _, reason in ipairs({...}) do total = total + (f.stall_share[reason] or 0) end
  return total / 100
end
M.PRICES = {
  ["contended atomics"] = {u = 0.3, model = "the time the serialized atomics cost: the larger of the waits they " ..
    "cause (drain, lg_throttle, membar, long_scoreboard shares) and the units' idle share (1 - max SoL)",
    fraction = function(f)
      return math.max(share_of(f, "drain", "lg_throttle", "membar", "long_scoreboard"),
        1 - math.max(f.sol_memory_pct, f.sol_compute_pct) / 100)
    end},
  ["shared-memory bank conflicts"] = {u = 0.5, model = "the extra wavefronts removed: (1 - 1/ways) of the shared " ..
    "memory's waits (mio_throttle and short_scoreboard shares)",
    fraction = function(f) return (1 - 1 / f.shared_ways) * share_of(f, "mio_throttle", "short_scoreboard") end},
  ["register spills"] = {u = 0.5, model = "the memory waits (long_scoreboard, lg_throttle shares) in the share of " ..
    "local accesses among the memory accesses",
    fraction = function(f) return share_of(f, "long_scoreboard", "lg_throttle") * (f.local_fraction or 0.5) end},
  ["uncoalesced global loads"] = {u = 0.3, model = "the bytes at the measured ceiling: the memory-bound share " ..
    "(memory SoL) of the time less the amplification (1 - 1/amplification), at most the roofline's: the time " ..
    "cannot fall below the busier unit's work after the fix, max(compute SoL, memory SoL / amplification)",
    fraction = function(f)
      local additive = f.sol_memory_pct / 100 * (1 - 1 / f.amplification)
      local roofline = 1 - math.max(f.sol_compute_pct / 100, f.sol_memory_pct / 100 / f.amplification)
      return math.min(additive, roofline)
    end},
  ["too few blocks"] = {bound = true, model = "the warps a full wave holds (Little's law: a latency-bound kernel's rate " ..
    "grows with its warps in flight, up to the busier unit's peak): 1 - max(waves, max SoL); without the waves, " ..
    "the work spread over every SM: 1 - the share of SMs given a block",
    fraction = function(f)
      if f.waves then return 1 - math.max(f.waves, math.max(f.sol_memory_pct, f.sol_compute_pct) / 100) end
      return 1 - f.sms_busy_pct / 100
    end},
  ["tail wave"] = {bound = true, model = "the last wave's idle share (ncu's tail effect, blocks of one duration): the " ..
    "work of W + t waves takes W + 1 wave times, so a grid of whole waves saves (1 - t) / (W + 1)",
    fraction = function(f) return (1 - f.tail_fraction) / (f.whole_waves + 1) end},
  ["occupancy"] = {bound = true, model = "ncu's theoretical occupancy rule: the warps the limiter withholds (1 - " ..
    "theoretical occupancy), at most the issue slots left idle (1 - issue active)",
    fraction = function(f)
      local withheld = 1 - f.theoretical_occupancy_pct / 100
      local idle = f.issue_active and 1 - f.issue_active or withheld
      return math.min(withheld, idle)
    end},
  ["barrier stalls"] = {u = 0.5, model = "the barrier's waits and those of the shared exchange it guards removed " ..
    "(barrier, short_scoreboard, mio_throttle shares)",
    fraction = function(f) return share_of(f, "barrier", "short_scoreboard", "mio_throttle") end},
  ["FP64 arithmetic"] = {u = 0.3, model = "the FP64 pipe's time at FP32's rate: FP64 pipe activity x (1 - FP64 " ..
    "rate / FP32 rate)",
    fraction = function(f) return (f.fp64_pipe_pct or f.sol_compute_pct) / 100 * (1 - (f.fp64_rate_ratio or 0.5)) end},
  ["branch divergence"] = {u = 0.3, model = "every lane active: 1 - active threads per instruction / the lanes " ..
    "warps start with",
    fraction = function(f) return 1 - f.threads_per_instruction / f.launch_lanes end},
  ["memory-bound"] = {u = 1, model = "at the ceiling: the headroom to the memory's peak (1 - memory SoL); less " ..
    "traffic is the only larger gain",
    fraction = function(f) return math.max(0, 1 - f.sol_memory_pct / 100) end},
  ["compute-bound"] = {u = 1, model = "at the ceiling: the headroom to the SM's peak (1 - compute SoL); less " ..
    "work is the only larger gain",
    fraction = function(f) return math.max(0, 1 - f.sol_compute_pct / 100) end},
  ["latency-bound"] = {u = 1, model = "half the headroom of the busier unit (1 - max SoL) / 2: more bytes or " ..
    "instructions in flight, more warps",
    fraction = function(f) return math.max(0, 1 - math.max(f.sol_memory_pct, f.sol_compute_pct) / 100) / 2 end},
}
M.PRICES["uncoalesced global stores"] = M.PRICES["uncoalesced global loads"]
M.PRICES["local memory"] = M.PRICES["register spills"]

-- The price model of a verdict ("occupancy limited by ..." share one).
function M.price_model(verdict)
  if type(verdict) ~= "string" then return nil end
  return M.PRICES[verdict] or (verdict:find("^occupancy limited by") and M.PRICES.occupancy) or nil
end

-- M.price(findings) -> {speedup, low, high, fraction, model, bound} for the findings' verdict, or
-- nil. A model that is an upper bound (price.bound: the launch's and the occupancy's, which assume
-- the work scales perfectly with the warps or SMs it gains, as ncu's estimates of them do) gives
-- the most the fix can gain, B = 1 / (1 - f); with nothing known of where below it the gain falls,
-- the price is the middle of [1, B] on the log scale, B^(1/2), and its 80% interval the middle 80%
-- of it, B^0.1 to B^0.9 (u = BOUND_U around the middle).
M.BOUND_U = 0.8
function M.price(f)
  local price = M.price_model(f.verdict)
  if not price then return nil end
  local ok, fraction = pcall(price.fraction, f)
  if not ok or type(fraction) ~= "number" or fraction ~= fraction then return nil end
  fraction = math.max(0, math.min(M.MAX_FRACTION, fraction))
  local speedup, u, bound = 1 / (1 - fraction), price.u, nil
  if price.bound then bound, speedup, u = speedup, speedup ^ 0.5, M.BOUND_U end
  -- (the estimate stops at MAX_FRACTION, its interval does not: a fraction read from stall shares
  -- near 100% is a lower bound, and an H100 measured a contended atomic 571x slower)
  return {speedup = speedup, low = speedup ^ (1 - u), high = speedup ^ (1 + u), fraction = fraction, bound = bound,
    model = price.model}
end

local function price_text(price)
  return string.format("if fixed: about %.3gx faster (%.3gx to %.3gx%s; %s)", price.speedup, price.low, price.high,
    price.bound and string.format(", at most %.3gx", price.bound) or "", price.model)
end

-- The verdict from the values (the collected metrics, derived values and occupancy), the kernel's
-- resources, the ceilings, the launch's block and its shape ({grid =, sms =, blocks_per_sm =}: the
-- blocks against the SMs, and the blocks an SM holds at once, from which the waves; optional):
-- {verdict, evidence (list of strings), price, values and the findings' numbers}.
function M.judge(v, resources, ceilings, block, shape)
  local sol_compute = v["sm__throughput.avg.pct_of_peak_sustained_elapsed"] or 0
  local sol_memory = v["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] or 0
  local dram = v["dram__throughput.avg.pct_of_peak_sustained_elapsed"] or 0
  local l2_hit = v["lts__t_sector_hit_rate.pct"] or 0
  -- stalls as shares of all stall cycles (as ncu's chart), largest first
  local stalls, total = {}, 0
  for _, reason in ipairs(metrics.stall_reasons) do
    local value = v[STALL:format(reason)]
    if value and reason ~= "selected" then
      stalls[#stalls + 1] = {reason = reason, value = value}
      total = total + value
    end
  end
  table.sort(stalls, function(a, b) return a.value > b.value end)
  for _, s in ipairs(stalls) do s.pct = total > 0 and 100 * s.value / total or 0 end
  local share = {}
  for _, s in ipairs(stalls) do share[s.reason] = s.pct end
  local atomics = (v["smsp__sass_inst_executed_op_global_atom.sum"] or 0) + (v["smsp__sass_inst_executed_op_global_red.sum"] or 0)
  local instructions = v["smsp__inst_executed.sum"] or 0
  local memory_instructions, counted = 0, false
  for _, name in ipairs(M.MEMORY_INSTRUCTIONS) do
    if type(v[name]) == "number" then memory_instructions, counted = memory_instructions + v[name], true end
  end
  local floor_of = counted and memory_instructions or instructions
  local floor = math.max(M.FLOOR.count, M.FLOOR.share * floor_of)
  local sector_use = v["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"]
  local store_use = v["smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"]
  local loads, stores = v["smsp__sass_inst_executed_op_global_ld.sum"], v["smsp__sass_inst_executed_op_global_st.sum"]
  local shared_requests = (v["smsp__sass_inst_executed_op_shared_ld.sum"] or 0) + (v["smsp__sass_inst_executed_op_shared_st.sum"] or 0)
  local local_requests = (v["l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"] or 0) +
    (v["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"] or 0)
  local global_requests = (v["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] or 0) +
    (v["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] or 0)
  local threads_per_instruction = v["smsp__average_thread_inst_executed_per_inst_executed.ratio"]
  local lanes = launch_lanes(block)
  local ways = math.max(v.shared_ld_ways or 0, v.shared_st_ways or 0)
  local intensity = v.fp32_flop_per_byte
  local knee = ceilings and ceilings.fp32_gflops and ceilings.dram_copy_gbps and ceilings.fp32_gflops / ceilings.dram_copy_gbps
  local fp64_pipe = v["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"]
  local dfma_peak = v["sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"]
  local ffma_peak = v["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"]
  local sm_active = v["sm__cycles_active.avg.pct_of_peak_sustained_elapsed"]
  local blocks = shape and grid_blocks(shape.grid)
  local sms = shape and shape.sms
  local blocks_per_sm = shape and tonumber(shape.blocks_per_sm)
  local waves = blocks and sms and sms > 0 and blocks_per_sm and blocks_per_sm > 0 and blocks / (blocks_per_sm * sms) or nil
  local findings = {
    sol_compute_pct = sol_compute, sol_memory_pct = sol_memory, dram_pct = dram, l2_hit_pct = l2_hit,
    top_stalls = stalls, stall_share = share, achieved_occupancy_pct = v.achieved_occupancy_pct,
    theoretical_occupancy_pct = v.theoretical_occupancy_pct,
    occupancy_limiter = v.occupancy_limiter, fp32_flop_per_byte = intensity, knee_flop_per_byte = knee,
    sector_use_pct = sector_use, store_sector_use_pct = store_use, threads_per_instruction = threads_per_instruction,
    launch_lanes = lanes, shared_ways = ways, atomic_instructions = atomics, instructions = instructions,
    count_floor = floor, local_requests = local_requests,
    local_fraction = local_requests + global_requests > 0 and local_requests / (local_requests + global_requests) or nil,
    spill_bytes = resources and ((resources.spill_store_bytes or 0) + (resources.spill_load_bytes or 0)),
    stack_frame_bytes = resources and resources.stack_frame_bytes, fp64_pipe_pct = fp64_pipe,
    fp64_rate_ratio = dfma_peak and ffma_peak and ffma_peak > 0 and dfma_peak / ffma_peak or nil,
    sm_active_pct = sm_active, blocks = blocks, sms = sms, block_threads = block_threads(block),
    sms_busy_pct = blocks and sms and sms > 0 and 100 * math.min(blocks, sms) / sms or nil,
    blocks_per_sm = blocks_per_sm, waves = waves, whole_waves = waves and math.floor(waves),
    tail_fraction = waves and waves - math.floor(waves),
    issue_active = v["smsp__issue_active.avg.per_cycle_active"], values = v,
  }
  local evidence = {string.format("SoL compute %.0f%%, memory %.0f%% (DRAM %.0f%%)", sol_compute, sol_memory, dram)}
  if stalls[1] then
    local parts = {}
    for i = 1, math.min(3, #stalls) do parts[i] = string.format("%s %.0f%%", stalls[i].reason, stalls[i].pct) end
    evidence[#evidence + 1] = "stalls: " .. table.concat(parts, ", ")
  end
  -- the counts a ratio rests on: enough, or said to be too few (nil: not collected, trusted as before)
  local too_few = {}
  local function enough(count, what, ratio_text)
    if count == nil or count >= floor then return true end
    too_few[#too_few + 1] = string.format("%s: %.0f, under the floor of %.0f (%d and %.0f%% of the %.0f " ..
      "%s): %s is no evidence", what, count, floor, M.FLOOR.count, M.FLOOR.share * 100, floor_of,
      counted and "memory instructions" or "warp instructions", ratio_text)
    return false
  end
  local loads_counted = sector_use and sector_use < 50 and enough(loads, "global load instructions",
    string.format("their sector use (%.0f%%)", sector_use))
  local stores_counted = store_use and store_use < 50 and enough(stores, "global store instructions",
    string.format("their sector use (%.0f%%)", store_use))
  local ways_counted = ways >= 1.5 and enough(shared_requests > 0 and shared_requests or nil, "shared-memory requests",
    string.format("%.1f wavefronts per request", ways))
  local local_counted = local_requests > 0 and enough(local_requests, "local-memory requests", "their traffic")
  local barrier = share.barrier or 0
  local verdict
  -- the telltales first: each names a fix, whatever the throughput
  if atomics > 0 and atomics >= 0.02 * instructions and dram < 5 and l2_hit > 50 then
    verdict = "contended atomics"
    evidence[#evidence + 1] = string.format("%.0f atomic instructions (%.0f%% of all), L2 hit %.0f%% on the total's line, " ..
      "DRAM %.1f%%, lg_throttle %.1f%% and drain %.1f%% of stalls", atomics, 100 * atomics / math.max(1, instructions), l2_hit,
      dram, share.lg_throttle or 0, share.drain or 0)
  elseif ways_counted then
    verdict = "shared-memory bank conflicts"
    evidence[#evidence + 1] = string.format("%.1f wavefronts per shared request (1 is conflict-free); mio_throttle %.0f%%, " ..
      "short_scoreboard %.0f%% of stalls", ways, share.mio_throttle or 0, share.short_scoreboard or 0)
  elseif findings.spill_bytes and findings.spill_bytes > 0 and ((share.long_scoreboard or 0) > 20 or sol_memory > 40) then
    verdict = "register spills"
    evidence[#evidence + 1] = string.format("%d bytes of spill loads and stores per thread (ptxas)", findings.spill_bytes)
  elseif local_counted and ((share.long_scoreboard or 0) + (share.lg_throttle or 0) > 20 or sol_memory > 40) then
    verdict = "local memory"
    evidence[#evidence + 1] = string.format("%.0f local-memory requests (%.1f%% of the instructions, %.0f%% of the " ..
      "memory requests) with a %d-byte stack frame and %s spilled: a per-thread array indexed at run time lives in " ..
      "local memory (index it with constants, or keep it in shared memory)", local_requests,
      100 * local_requests / math.max(1, instructions), 100 * (findings.local_fraction or 0), findings.stack_frame_bytes or 0,
      (findings.spill_bytes or 0) > 0 and (findings.spill_bytes .. " bytes") or "nothing")
  elseif (loads_counted or stores_counted) and sol_memory > 30 then
    -- the worse of the two names the verdict; each one below half is evidence, with the traffic
    -- it multiplies (a sector moved for every few bytes used)
    local load_use = loads_counted and sector_use or 100
    local write_use = stores_counted and store_use or 100
    verdict = write_use < load_use and "uncoalesced global stores" or "uncoalesced global loads"
    findings.amplification = 100 / math.max(math.min(load_use, write_use), 1)
    if loads_counted then
      evidence[#evidence + 1] = string.format("loads use %.0f%% of the bytes of the sectors they fetch (read amplification " ..
        "%.1fx)", sector_use, 100 / math.max(sector_use, 1))
    end
    if stores_counted then
      evidence[#evidence + 1] = string.format("stores use %.0f%% of the bytes of the sectors they write (write " ..
        "amplification %.1fx)", store_use, 100 / math.max(store_use, 1))
    end
  elseif findings.sms_busy_pct and findings.sms_busy_pct < 90 and blocks * findings.block_threads >= 64 * sms then
    -- fewer blocks than SMs, with threads enough for two warps on every SM: the work fits more blocks
    verdict = "too few blocks"
    evidence[#evidence + 1] = string.format("%d blocks of %d threads for %d SMs: %d SMs (%.0f%%) get no block%s",
      blocks, findings.block_threads, sms, sms - math.min(blocks, sms), 100 - findings.sms_busy_pct,
      sm_active and string.format("; the SMs had work %.0f%% of the time", sm_active) or "")
  elseif (fp64_pipe and fp64_pipe >= M.FP64_PIPE_PCT) or
    (v.fp64_flop and v.fp32_flop and v.fp64_flop > v.fp32_flop and sol_compute >= 40) then
    verdict = "FP64 arithmetic"
    evidence[#evidence + 1] = string.format("the FP64 pipe is active %.0f%% of the time%s%s: double precision where " ..
      "single would do? (check literals and math functions: 1.0 and sqrt() are doubles, 1.0f and sqrtf() are not)",
      fp64_pipe or 0, v.fp64_flop and string.format(" (%.3g FP64 FLOP, %.3g FP32)", v.fp64_flop, v.fp32_flop or 0) or "",
      findings.fp64_rate_ratio and string.format(", at %.3g of FP32's rate on this GPU",
      findings.fp64_rate_ratio) or "")
  elseif barrier >= M.BARRIER_PCT and (sol_compute < M.BOUND_PCT and sol_memory < M.BOUND_PCT or
    barrier >= M.BARRIER_DOMINANT_PCT and stalls[1] and stalls[1].reason == "barrier") then
    -- a barrier that holds most of the waits is the verdict even when the SM looks busy: the busy
    -- unit is then the shared-memory exchange the barrier guards (seen on an H100: 54% barrier at
    -- a compute SoL of 91%, the shared pipe's), and removing the barrier is the fix
    verdict = "barrier stalls"
    evidence[#evidence + 1] = string.format("warps wait at __syncthreads() %.0f%% of their stalls (short_scoreboard " ..
      "%.0f%%, mio_throttle %.0f%%; SoL compute %.0f%%, memory %.0f%%): fewer barriers (a warp-level exchange, " ..
      "__shfl_*, or more work between them)", barrier, share.short_scoreboard or 0, share.mio_throttle or 0,
      sol_compute, sol_memory)
  elseif sol_memory >= M.BOUND_PCT and sol_memory >= sol_compute then
    verdict = "memory-bound"
    if intensity and knee then evidence[#evidence + 1] = string.format("%.2f FLOP/byte, under the %.1f knee", intensity, knee) end
  elseif threads_per_instruction and threads_per_instruction < 0.75 * lanes then
    verdict = "branch divergence"
    evidence[#evidence + 1] = string.format("%.1f active threads per instruction of the %.0f its warps start with",
      threads_per_instruction, lanes)
  elseif sol_compute >= M.BOUND_PCT then
    verdict = "compute-bound"
    if intensity and knee then evidence[#evidence + 1] = string.format("%.2f FLOP/byte, over the %.1f knee", intensity, knee) end
  elseif waves and waves <= M.WARPS_WITHHELD and blocks * findings.block_threads >= 64 * sms then
    -- (latency-bound: neither unit near its peak) the grid holds at most half of a wave: the SMs
    -- hold at most half the warps they could, and the work fits more blocks (it has threads for
    -- two warps on every SM: one thread chasing pointers does not)
    verdict = "too few blocks"
    evidence[#evidence + 1] = string.format("%d blocks of %d threads: %.3g waves (an SM holds %d of them at once, %d " ..
      "SMs): the SMs hold at most %.0f%% of the warps they could; achieved occupancy %.0f%%, SoL compute %.0f%%, " ..
      "memory %.0f%%", blocks, findings.block_threads, waves, blocks_per_sm, sms, 100 * waves,
      v.achieved_occupancy_pct or 0, sol_compute, sol_memory)
  elseif waves and findings.whole_waves >= 1 and findings.tail_fraction > 0 and
    blocks - findings.whole_waves * blocks_per_sm * sms < sms and 1 / (findings.whole_waves + 1) >= M.TAIL_EFFECT then
    -- (latency-bound: a block's time does not depend on the blocks beside it) the last wave's
    -- blocks are fewer than the SMs: SMs idle while it runs
    verdict = "tail wave"
    local tail_blocks = blocks - findings.whole_waves * blocks_per_sm * sms
    evidence[#evidence + 1] = string.format("%d blocks: %.3g waves of %d (%d SMs x %d): the last wave runs %d " ..
      "blocks, %d SMs idle while it does; a grid of %d or %d waves' blocks (or more work a block) has no tail",
      blocks, waves, blocks_per_sm * sms, sms, blocks_per_sm, tail_blocks, sms - tail_blocks, findings.whole_waves,
      findings.whole_waves + 1)
  elseif v.theoretical_occupancy_pct and v.theoretical_occupancy_pct <= 100 * M.WARPS_WITHHELD and
    limiter_words(v.occupancy_limiter) and (waves and waves >= 1 or
    not waves and (v.achieved_occupancy_pct or 0) >= M.LIMITER_BINDS * v.theoretical_occupancy_pct) then
    -- (latency-bound) the limiter withholds at least half the warps an SM could hold, and binds: the
    -- grid fills at least one wave of the blocks the limit allows (without the launch shape: the SMs
    -- reach a quarter of that occupancy). A grid of one thread reaches 2% of a 50% limit: the grid, not
    -- the limiter, keeps the warps away (an H100 run of test_diagnose's pointer chase).
    local limited = limiter_words(v.occupancy_limiter)
    verdict = "occupancy limited by " .. limited
    evidence[#evidence + 1] = string.format("theoretical occupancy %.0f%% (limited by %s), achieved %.0f%%, neither unit " ..
      "near its peak (SoL compute %.0f%%, memory %.0f%%): too few warps to hide the latency; %s",
      v.theoretical_occupancy_pct, limited, v.achieved_occupancy_pct or 0, sol_compute, sol_memory,
      limited:find("registers") and "fewer registers a thread (__launch_bounds__, -maxrregcount, less live state)" or
      limited:find("shared") and "less shared memory a block" or "larger blocks (at least 64 threads)")
  else
    verdict = "latency-bound"
    evidence[#evidence + 1] = string.format("neither unit near its peak; achieved occupancy %.0f%% of a theoretical %.0f%% (%s)",
      v.achieved_occupancy_pct or 0, v.theoretical_occupancy_pct or 0, tostring(v.occupancy_limiter))
    if stalls[1] and stalls[1].reason == "long_scoreboard" and dram >= 20 then
      -- a stream that waits on DRAM without filling it: too few bytes in flight (Little's law)
      evidence[#evidence + 1] = string.format("warps wait on global memory (long_scoreboard %.0f%% of stalls) with DRAM at " ..
        "%.0f%%: too few bytes in flight; more independent loads per thread (vector types, unrolling) or more warps",
        stalls[1].pct, dram)
    end
  end
  for _, line in ipairs(too_few) do evidence[#evidence + 1] = line end
  findings.verdict = verdict
  findings.price = M.price(findings)
  if findings.price then evidence[#evidence + 1] = price_text(findings.price) end
  findings.evidence = evidence
  return findings
end

-- M.run(kernel, spec) -> findings (above), or nil and why (no counters here).
function M.run(kernel, spec)
  if type(kernel) ~= "userdata" and type(kernel) ~= "table" then
    gpuexp.error("usage", "diagnose: argument 1 must be a kernel (program:kernel(name)), got " .. type(kernel))
  end
  if type(spec) ~= "table" then
    gpuexp.error("usage", "diagnose: argument 2 must be the launch {grid =, block =, args =}, got " .. type(spec))
  end
  local launch = {}
  for _, key in ipairs(gpuexp.launch_keys) do launch[key] = spec[key] end
  launch.metrics = {"occupancy", "warp_stalls"}
  for _, name in ipairs(M.names) do launch.metrics[#launch.metrics + 1] = name end
  local values, info = kernel:metrics(launch)
  if not values then return nil, info end
  local ceilings = gpuexp.ceilings and gpuexp.ceilings() or nil
  local found, device = pcall(gpuexp.device)
  -- the blocks an SM holds at once, from the occupancy the driver gives (the waves' denominator)
  local known, occupancy = pcall(function() return kernel:occupancy{block = spec.block or 1, shared = spec.shared} end)
  local findings = M.judge(values, kernel:resources(), ceilings, spec.block,
    {grid = spec.grid, sms = found and device and device.sm_count or nil,
      blocks_per_sm = known and type(occupancy) == "table" and (occupancy.active_blocks_per_sm or occupancy.blocks_per_sm) or nil})
  findings.kernel = kernel.name
  findings.passes = info.passes
  return findings
end

function M.format(f)
  local lines = {string.format("diagnosis of %s: %s", f.kernel or "the launch", f.verdict:upper())}
  for _, e in ipairs(f.evidence) do lines[#lines + 1] = "  " .. e end
  if f.achieved_occupancy_pct then
    lines[#lines + 1] = string.format("  occupancy: achieved %.0f%%, theoretical %.0f%% (limited by %s)", f.achieved_occupancy_pct,
      f.theoretical_occupancy_pct or 0, tostring(f.occupancy_limiter))
  end
  return table.concat(lines, "\n")
end

return M
