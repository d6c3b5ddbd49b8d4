-- The diagnosis rules on counter values where the answer is known (shapes of the shipped studies'
-- kernels as an H200 measured them); tests/gpu runs them on the kernels themselves.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local diagnose = require("gpuexp.api.diagnose")
local function stalls(t)
  local v = {}
  for reason, value in pairs(t) do v["smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"] = value end
  return v
end
local function case(fields, stall_values, resources, block)
  local v = stalls(stall_values or {long_scoreboard = 10, selected = 1})
  for k, x in pairs(fields) do v[k] = x end
  v["smsp__inst_executed.sum"] = v["smsp__inst_executed.sum"] or 1e6
  return diagnose.judge(v, resources or {spill_store_bytes = 0, spill_load_bytes = 0}, {fp32_gflops = 59000, dram_copy_gbps = 4230},
    block or 256)
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
T.ok(f.evidence[#f.evidence]:find("too few bytes in flight", 1, true), f.evidence[#f.evidence])
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
T.ok(f.evidence[#f.evidence]:find("of the bytes of the sectors they write (write amplification 8.0x)", 1, true),
  f.evidence[#f.evidence])
-- both bad: the worse one names it, both are evidence
f = case({[SOL_C] = 8, [SOL_M] = 70, [LD] = 25, [ST] = 49})
T.eq(f.verdict, "uncoalesced global loads", "loads worse than stores")
T.ok(f.evidence[#f.evidence - 1]:find("read amplification 4.0x", 1, true), "read amplification")
-- a copy whose loads and stores are both whole: memory-bound
T.eq(case({[SOL_C] = 6, [SOL_M] = 83, [LD] = 100, [ST] = 100}).verdict, "memory-bound", "a coalesced copy")
-- the roofline's low-intensity point: lanes diverge, but the memory is what binds it
T.eq(case({[SOL_C] = 32, [SOL_M] = 79, ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 12}).verdict,
  "memory-bound", "divergent lanes of a memory-bound kernel")
-- spills with memory traffic
T.eq(case({[SOL_C] = 20, [SOL_M] = 50}, {long_scoreboard = 30, selected = 1}, {spill_store_bytes = 64, spill_load_bytes = 64}).verdict,
  "register spills", "spills")
T.done()
