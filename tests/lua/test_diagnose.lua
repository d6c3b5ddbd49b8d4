-- The diagnosis rules on counter values where the answer is known (shapes of the shipped studies'
-- kernels as an H200 measured them); tests/gpu runs them on the kernels themselves.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local diagnose = require("gpuexp.api.diagnose")
local function stalls(t)
  local v = {}
  for reason, value in pairs(t) do v["smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"] = value end
  return v
end
local function case(fields, stall_values, resources, block, shape)
  local v = stalls(stall_values or {long_scoreboard = 10, selected = 1})
  for k, x in pairs(fields) do v[k] = x end
  v["smsp__inst_executed.sum"] = v["smsp__inst_executed.sum"] or 1e6
  local f = diagnose.judge(v, resources or {spill_store_bytes = 0, spill_load_bytes = 0}, {fp32_gflops = 59000,
    dram_copy_gbps = 4230}, block or 256, shape)
  f.text = table.concat(f.evidence, "; ")
  return f
end
-- whether an evidence line of the findings holds the text
local function has(f, text)
  for _, line in ipairs(f.evidence) do if line:find(text, 1, true) then return true end end
  return false
end
local SOL_C, SOL_M = "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
local DRAM, L2 = "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct"
local LD, ST = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
  "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"

-- SAXPY: memory-bound
local f = case({[SOL_C] = 20, [SOL_M] = 92, [DRAM] = 92, [L2] = 33, fp32_flop_per_byte = 0.17})
T.eq(f.verdict, "memory-bound", "saxpy")
T.ok(f.evidence[3]:find("under the 13.9 knee", 1, true), "intensity against the knee: " .. f.evidence[3])
-- the roofline's FMA chain at 256 FLOP/byte: compute-bound
T.eq(case({[SOL_C] = 88, [SOL_M] = 12, [DRAM] = 10, fp32_flop_per_byte = 256}, {math_pipe_throttle = 5, wait = 2}).verdict,
  "compute-bound", "fma chain")
-- float atomic per thread (seed 004 v1 on the H200): contended atomics despite no lg_throttle dominance
f = case({[SOL_C] = 2, [SOL_M] = 3, [DRAM] = 0.05, [L2] = 88.8, ["smsp__sass_inst_executed_op_global_red.sum"] = 131072,
  ["smsp__inst_executed.sum"] = 1.2e6}, {drain = 40000, long_scoreboard = 11330, lg_throttle = 123})
T.eq(f.verdict, "contended atomics", "float atomics")
T.ok(f.evidence[3]:find("L2 hit 89%", 1, true), f.evidence[3])
-- two-way bank conflicts
T.eq(case({[SOL_C] = 30, [SOL_M] = 40, shared_ld_ways = 2, shared_st_ways = 2}, {mio_throttle = 5, short_scoreboard = 4}).verdict,
  "shared-memory bank conflicts", "bank conflicts")
T.eq(case({[SOL_C] = 30, [SOL_M] = 40, shared_ld_ways = 1, shared_st_ways = 1}).verdict, "latency-bound", "no conflict, low SoL")
-- per-lane divergence
T.eq(case({[SOL_C] = 45, [SOL_M] = 10, ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 10}).verdict,
  "branch divergence", "divergence")
-- a pointer chase by one thread (an H200's counters): one thread per instruction is all a warp of
-- one lane has, not divergence; it waits on each load: latency-bound
f = case({[SOL_C] = 0.3, [SOL_M] = 0.4, [DRAM] = 0.1, ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 1},
  {long_scoreboard = 99, wait = 1}, nil, 1)
T.eq(f.verdict, "latency-bound", "a one-thread pointer chase")
T.eq(case({[SOL_C] = 45, [SOL_M] = 10, ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 10}, nil, nil,
  {16, 16}).verdict, "branch divergence", "a 16x16 block's warps start with 32 lanes")
T.eq(case({[SOL_C] = 45, [SOL_M] = 10, ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 10}, nil, nil,
  12).verdict, "latency-bound", "a 12-thread block: 10 of 12 lanes is not divergence")
-- a 4-byte copy on the H200: DRAM at half its peak, warps waiting on loads: latency-bound, with why
f = case({[SOL_C] = 24, [SOL_M] = 51, [DRAM] = 51, [LD] = 100, [ST] = 100}, {long_scoreboard = 86, wait = 5, short_scoreboard = 4})
T.eq(f.verdict, "latency-bound", "a scalar copy at half the DRAM's peak")
T.ok(has(f, "too few bytes in flight"), f.text)
-- stride-32 loads
T.eq(case({[SOL_C] = 10, [SOL_M] = 70, ["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"] = 12.5}).verdict,
  "uncoalesced global loads", "coalescing")
-- a 16-byte copy uses every byte it fetches: memory-bound, not uncoalesced
T.eq(case({[SOL_C] = 6, [SOL_M] = 83, ["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"] = 100}).verdict,
  "memory-bound", "copy")
-- coalesced loads, stores 8 sectors per request (the case that was called only memory-bound: memory
-- SoL 82%, DRAM 13%): uncoalesced stores, with the write amplification
f = case({[SOL_C] = 8, [SOL_M] = 82, [DRAM] = 13, [LD] = 100, [ST] = 12.5})
T.eq(f.verdict, "uncoalesced global stores", "strided stores")
T.ok(has(f, "of the bytes of the sectors they write (write amplification 8.0x)"), f.text)
-- both bad: the worse one names it, both are evidence
f = case({[SOL_C] = 8, [SOL_M] = 70, [LD] = 25, [ST] = 49})
T.eq(f.verdict, "uncoalesced global loads", "loads worse than stores")
T.ok(has(f, "read amplification 4.0x"), "read amplification")
-- a copy whose loads and stores are both whole: memory-bound
T.eq(case({[SOL_C] = 6, [SOL_M] = 83, [LD] = 100, [ST] = 100}).verdict, "memory-bound", "a coalesced copy")
-- the roofline's low-intensity point: lanes diverge, but the memory is what binds it
T.eq(case({[SOL_C] = 32, [SOL_M] = 79, ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 12}).verdict,
  "memory-bound", "divergent lanes of a memory-bound kernel")
-- spills with memory traffic
T.eq(case({[SOL_C] = 20, [SOL_M] = 50}, {long_scoreboard = 30, selected = 1}, {spill_store_bytes = 64, spill_load_bytes = 64}).verdict,
  "register spills", "spills")

-- No verdict from counts too small to mean anything. The judgments issue's barrier kernel: a
-- __syncthreads() per iteration with a shared-memory exchange, no global reads (32 load
-- instructions in all, their sector use a ratio of near-zero counts: it read "uncoalesced global
-- loads ... read amplification 100.0x"); barrier 26% of its stalls
local barrier_values = {[SOL_C] = 38, [SOL_M] = 45, [DRAM] = 0.5, [L2] = 90, [LD] = 0, [ST] = 100,
  ["smsp__sass_inst_executed_op_global_ld.sum"] = 32, ["smsp__sass_inst_executed_op_global_st.sum"] = 33792,
  ["smsp__inst_executed.sum"] = 3.4e7, ["smsp__sass_inst_executed_op_shared_ld.sum"] = 4.2e6,
  ["smsp__sass_inst_executed_op_shared_st.sum"] = 4.2e6, shared_ld_ways = 1.0, shared_st_ways = 1.0}
local barrier_stalls = {barrier = 26, short_scoreboard = 22, mio_throttle = 12, wait = 15, long_scoreboard = 3,
  not_selected = 10, selected = 1}
f = case(barrier_values, barrier_stalls)
T.eq(f.verdict, "barrier stalls", "the barrier kernel: " .. f.text)
T.ok(not has(f, "amplification"), "no amplification from 32 loads: " .. f.text)
T.ok(has(f, "global load instructions: 32, under the floor of 84338 (1024 and 1% of the 8433824 memory " ..
  "instructions): their sector use (0%) is no evidence"), "the evidence says the counts are too small: " .. f.text)
-- with the floor removed (the mutant the issue describes), the same counts are a verdict again
local saved_floor = diagnose.FLOOR
diagnose.FLOOR = {count = 0, share = 0}
T.eq(case(barrier_values, barrier_stalls).verdict, "uncoalesced global loads", "without the floor: the wrong verdict")
diagnose.FLOOR = saved_floor
-- bank conflicts from a handful of shared requests are none either
f = case({[SOL_C] = 30, [SOL_M] = 40, shared_ld_ways = 8, ["smsp__sass_inst_executed_op_shared_ld.sum"] = 100,
  ["smsp__sass_inst_executed_op_shared_st.sum"] = 0})
T.ok(f.verdict ~= "shared-memory bank conflicts" and has(f, "shared-memory requests: 100, under the floor"), f.text)

-- The floor is a share of the memory instructions, not of all warp instructions: gathered loads in
-- an elementwise kernel with FMAs between them (the corpus' coalesce_load.0 on an H100: loads 0.73%
-- of the warp instructions, half of the memory instructions) are counts enough to be evidence
local gathered = {[SOL_C] = 63.3, [SOL_M] = 64.8, [DRAM] = 35.2, [LD] = 12.5, [ST] = 100,
  ["smsp__sass_inst_executed_op_global_ld.sum"] = 1436672, ["smsp__sass_inst_executed_op_global_st.sum"] = 1436672,
  ["smsp__inst_executed.sum"] = 196824100}
f = case(gathered, {long_scoreboard = 70, wait = 14, short_scoreboard = 6, selected = 2})
T.eq(f.verdict, "uncoalesced global loads", "gathered loads between FMAs: " .. f.text)
T.ok(has(f, "read amplification 8.0x"), f.text)
-- its price: the roofline's bound, not the additive model: the compute unit is at 63% already, so
-- the time cannot fall below 63% of itself (the additive model said 0.648 x 7/8 = 57% of it)
T.near(f.price.fraction, 1 - 0.633, 1e-9, "uncoalesced loads priced at most by the busier unit: " .. f.text)

-- FP64 replacing FP32 in an FMA loop: the FP64 pipe named, at half of FP32's rate (GH100's peaks)
local FP64 = "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"
local fp64_peaks = {["sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"] = 8448,
  ["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"] = 16896}
local fields = {[SOL_C] = 94, [SOL_M] = 3, [FP64] = 94}
for k, x in pairs(fp64_peaks) do fields[k] = x end
f = case(fields, {math_pipe_throttle = 30, wait = 40, selected = 10})
T.eq(f.verdict, "FP64 arithmetic", "FP64 for FP32: " .. f.text)
T.ok(has(f, "the FP64 pipe is active 94% of the time, at 0.5 of FP32's rate on this GPU"), f.text)
-- the FP32 loop itself: compute-bound, no FP64
T.eq(case({[SOL_C] = 88, [SOL_M] = 3, [FP64] = 0}, {math_pipe_throttle = 5, wait = 2}).verdict, "compute-bound", "FP32")

-- a per-thread array indexed at run time: a 64-byte stack frame, no spill, local memory traffic
f = case({[SOL_C] = 25, [SOL_M] = 55, [DRAM] = 30, [LD] = 100, [ST] = 100,
  ["l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"] = 3.3e6, ["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"] = 1.1e6,
  ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 1.4e5, ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = 1.4e5,
  ["smsp__inst_executed.sum"] = 2.6e7}, {long_scoreboard = 70, lg_throttle = 5, wait = 10, selected = 2},
  {spill_store_bytes = 0, spill_load_bytes = 0, stack_frame_bytes = 64})
T.eq(f.verdict, "local memory", "a run-time indexed array: " .. f.text)
T.ok(has(f, "with a 64-byte stack frame and nothing spilled"), f.text)

-- the same work in 1/16 of the blocks: 66 blocks of 256 threads for 132 SMs
f = case({[SOL_C] = 30, [SOL_M] = 25, ["sm__cycles_active.avg.pct_of_peak_sustained_elapsed"] = 49.6,
  achieved_occupancy_pct = 12.4, theoretical_occupancy_pct = 100}, {long_scoreboard = 50, wait = 20, selected = 5}, nil, 256,
  {grid = 66, sms = 132})
T.eq(f.verdict, "too few blocks", "1/16 of the blocks: " .. f.text)
T.ok(has(f, "66 blocks of 256 threads for 132 SMs: 66 SMs (50%) get no block; the SMs had work 50% of the time"), f.text)
T.eq(case({[SOL_C] = 30, [SOL_M] = 25}, nil, nil, 256, {grid = 1056, sms = 132}).verdict, "latency-bound",
  "1056 blocks fill the SMs")
T.eq(case({[SOL_C] = 0.3, [SOL_M] = 0.4}, {long_scoreboard = 99}, nil, 1, {grid = 1, sms = 132}).verdict, "latency-bound",
  "one thread (a pointer chase) is not a launch short of blocks")
T.eq(case({[SOL_C] = 0.3, [SOL_M] = 0.4}, {long_scoreboard = 99}, nil, 1, {grid = 1, sms = 132, blocks_per_sm = 32}).verdict,
  "latency-bound", "nor with its waves known (1/4224 of a wave)")

-- Latency-bound kernels short of warps, with what withholds them (the corpus of causes' shapes,
-- measured on an H100: tests/lua/test_diagnose.lua keeps their values, bench/corpus/records/h100
-- the records). Too few blocks without 90% of the SMs idle: 198 blocks of 128 threads for 132 SMs
-- that hold 12 each, 0.125 waves (few_blocks.1.few): every SM has a block, each holds an eighth of
-- the warps it could
local latency = {long_scoreboard = 67, wait = 31, branch_resolving = 1, selected = 1}
f = case({[SOL_C] = 13.2, [SOL_M] = 9.4, achieved_occupancy_pct = 9.3, theoretical_occupancy_pct = 75,
  occupancy_limiter = "registers"}, latency, nil, 128, {grid = 198, sms = 132, blocks_per_sm = 12})
T.eq(f.verdict, "too few blocks", "an eighth of a wave: " .. f.text)
T.ok(has(f, "198 blocks of 128 threads: 0.125 waves (an SM holds 12 of them at once, 132 SMs)"), f.text)
-- its price is a bound (the warps of a full wave, up to the busier unit's peak): 1 / max(0.125, 0.132)
T.near(f.price.bound, 1 / 0.132, 1e-9, "too few blocks: at most the busier unit's headroom")
T.near(f.price.speedup, (1 / 0.132) ^ 0.5, 1e-9, "the price: the middle of [1, bound] on the log scale")
T.near(f.price.low, (1 / 0.132) ^ 0.1, 1e-9, "its 80% interval: bound^0.1 ..")
T.near(f.price.high, (1 / 0.132) ^ 0.9, 1e-9, ".. bound^0.9")
-- the same kernel over a whole wave: no verdict of the launch
T.eq(case({[SOL_C] = 13.2, [SOL_M] = 9.4}, latency, nil, 128, {grid = 1584, sms = 132, blocks_per_sm = 12}).verdict,
  "latency-bound", "a whole wave")
-- more than half a wave is not the verdict (the launch withholds under half the warps)
T.eq(case({[SOL_C] = 13.2, [SOL_M] = 9.4}, latency, nil, 128, {grid = 1056, sms = 132, blocks_per_sm = 12}).verdict,
  "latency-bound", "two thirds of a wave")
-- a kernel at a unit's peak is bound by it, whatever its waves
T.eq(case({[SOL_C] = 15, [SOL_M] = 79, [DRAM] = 79}, latency, nil, 128, {grid = 528, sms = 132, blocks_per_sm = 12}).verdict,
  "memory-bound", "a third of a wave at 79% of the DRAM's peak")

-- A tail wave: 891 blocks of 256 threads, 6 an SM, 132 SMs: 1.125 waves (few_blocks.0.tail); the
-- last wave runs 99 blocks, 33 SMs idle
f = case({[SOL_C] = 35.9, [SOL_M] = 38.8, achieved_occupancy_pct = 60, theoretical_occupancy_pct = 75,
  occupancy_limiter = "registers"}, {long_scoreboard = 81, wait = 16, selected = 1}, nil, 256,
  {grid = 891, sms = 132, blocks_per_sm = 6})
T.eq(f.verdict, "tail wave", "1.125 waves: " .. f.text)
T.ok(has(f, "891 blocks: 1.12 waves of 792 (132 SMs x 6): the last wave runs 99 blocks, 33 SMs idle while it does"), f.text)
T.near(f.price.bound, 1 / (1 - 0.875 / 2), 1e-9, "the tail's cost: (1 - 0.125) / (1 + 1) of the time")
-- a last wave with a block for every SM is no tail verdict (1.33 waves of 3 blocks an SM: 176 blocks)
T.eq(case({[SOL_C] = 27, [SOL_M] = 37}, latency, nil, 512, {grid = 528, sms = 132, blocks_per_sm = 3}).verdict,
  "latency-bound", "the last wave gives every SM a block")
-- nor a tail behind 5 or more whole waves (its cost, 1 / (5 + 1), is under a fifth: ncu's rule);
-- behind 4 it is
T.eq(case({[SOL_C] = 27, [SOL_M] = 37}, latency, nil, 256, {grid = 5 * 792 + 99, sms = 132, blocks_per_sm = 6}).verdict,
  "latency-bound", "5.125 waves")
T.eq(case({[SOL_C] = 27, [SOL_M] = 37}, latency, nil, 256, {grid = 4 * 792 + 99, sms = 132, blocks_per_sm = 6}).verdict,
  "tail wave", "4.125 waves")

-- Occupancy limited by a resource, latency-bound: registers at 25% (occupancy.1.registers), shared
-- memory at 12.5% (occupancy.1.shared), 32-thread blocks at 50% (occupancy.1.block)
local occupancy_values = {[SOL_C] = 18.2, [SOL_M] = 20.8, [DRAM] = 20.8, achieved_occupancy_pct = 19.3,
  theoretical_occupancy_pct = 25, occupancy_limiter = "registers", ["smsp__issue_active.avg.per_cycle_active"] = 0.173}
f = case(occupancy_values, {long_scoreboard = 77, wait = 14, short_scoreboard = 5, selected = 2}, nil, 128,
  {grid = 207616, sms = 132, blocks_per_sm = 4})
T.eq(f.verdict, "occupancy limited by registers", "25% by registers: " .. f.text)
T.ok(has(f, "theoretical occupancy 25% (limited by registers), achieved 19%"), f.text)
T.near(f.price.bound, 1 / 0.25, 1e-9, "ncu's estimate: the warps withheld, 1 - 25%")
occupancy_values.occupancy_limiter, occupancy_values.theoretical_occupancy_pct = "shared", 12.5
T.eq(case(occupancy_values, latency).verdict, "occupancy limited by shared memory", "12.5% by shared memory")
occupancy_values.occupancy_limiter, occupancy_values.theoretical_occupancy_pct = "blocks", 50
f = case(occupancy_values, latency, nil, 32)
T.eq(f.verdict, "occupancy limited by the block size", "32-thread blocks: " .. f.text)
T.ok(has(f, "larger blocks"), f.text)
-- a limit the grid never reaches does not bind: test_diagnose's pointer chase on an H100, one block of
-- one thread, a 50% block-size limit and 2% achieved, is latency-bound (the grid keeps the warps
-- away), with or without its launch shape
local chase = {[SOL_C] = 0.1, [SOL_M] = 0.1, [DRAM] = 0.1, achieved_occupancy_pct = 2, theoretical_occupancy_pct = 50,
  occupancy_limiter = "blocks", ["smsp__issue_active.avg.per_cycle_active"] = 0.01}
T.eq(case(chase, {long_scoreboard = 99, wait = 1}, nil, 1, {grid = 1, sms = 132, blocks_per_sm = 32}).verdict,
  "latency-bound", "one block of one thread: the limit does not bind")
T.eq(case(chase, {long_scoreboard = 99, wait = 1}, nil, 1).verdict, "latency-bound", "nor without the launch shape")
-- 75% by registers (the corpus' good kernels) withholds a quarter of the warps: latency-bound
occupancy_values.occupancy_limiter, occupancy_values.theoretical_occupancy_pct = "registers", 75
T.eq(case(occupancy_values, latency).verdict, "latency-bound", "75% by registers")
-- the warp slots alone limiting it name nothing to fix
occupancy_values.occupancy_limiter, occupancy_values.theoretical_occupancy_pct = "warps", 50
T.eq(case(occupancy_values, latency).verdict, "latency-bound", "limited by the warps alone")

-- Price tags: the speedup if fixed, by the verdict's model, from the values alone
f = case({[SOL_C] = 30, [SOL_M] = 25}, {long_scoreboard = 50, wait = 20, selected = 5}, nil, 256, {grid = 66, sms = 132})
T.near(f.price.bound, 2.0, 1e-9, "too few blocks without the blocks an SM holds: the work over every SM, 1 / 0.5")
T.near(f.price.speedup, 2 ^ 0.5, 1e-9, "the price: the bound's middle on the log scale")
T.ok(has(f, "if fixed: about 1.41x faster (1.07x to 1.87x, at most 2x; the warps a full wave holds"), f.text)
f = case({[SOL_C] = 10, [SOL_M] = 70, [LD] = 12.5, ["smsp__sass_inst_executed_op_global_ld.sum"] = 1e5})
T.near(f.price.fraction, 0.7 * (1 - 1 / 8), 1e-9, "uncoalesced loads: the memory share less the amplification")
f = case(fields, {math_pipe_throttle = 30, wait = 40, selected = 10})
T.near(f.price.fraction, 0.94 * 0.5, 1e-9, "FP64: the pipe's time at FP32's rate")
f = case({[SOL_C] = 2, [SOL_M] = 3, [DRAM] = 0.05, [L2] = 88.8, ["smsp__sass_inst_executed_op_global_red.sum"] = 131072,
  ["smsp__inst_executed.sum"] = 1.2e6}, {drain = 40000, long_scoreboard = 11330, lg_throttle = 123, wait = 500})
T.eq(f.verdict, "contended atomics", "atomics")
T.ok(f.price.speedup > 10 and f.price.low < f.price.speedup and f.price.high >= f.price.speedup,
  string.format("atomics: %.1fx (%.1fx to %.1fx)", f.price.speedup, f.price.low, f.price.high))
f = case(barrier_values, barrier_stalls)
T.near(f.price.fraction, (26 + 22 + 12) / 88, 1e-9, "barrier stalls: the barrier's and the exchange's waits")
-- every verdict has one, and a stored diagnosis is priced again from its values alone
for _, verdict in ipairs({"contended atomics", "shared-memory bank conflicts", "register spills", "local memory",
  "uncoalesced global loads", "uncoalesced global stores", "too few blocks", "FP64 arithmetic", "barrier stalls",
  "memory-bound", "branch divergence", "compute-bound", "latency-bound", "tail wave", "occupancy limited by registers",
  "occupancy limited by shared memory", "occupancy limited by the block size"}) do
  T.ok(diagnose.price_model(verdict), verdict .. " has a price model")
end
local again = diagnose.judge(f.values, {spill_store_bytes = 0, spill_load_bytes = 0}, nil, 256)
T.eq(again.price.speedup, f.price.speedup, "priced again from the stored values")
T.done()
