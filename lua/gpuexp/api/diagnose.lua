-- A diagnosis of one kernel launch, in the spirit of seed 004's "stall distribution as
-- fingerprint": Speed of Light first (compute and memory throughput as % of peak), then the
-- dominant stalls, achieved against theoretical occupancy with its limiter, arithmetic intensity
-- against the measured knee, and the telltales of known problems (contended atomics, bank
-- conflicts, uncoalesced loads, divergence, spills). Ends in a one-line verdict with its evidence.
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
  "smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum",
  "smsp__inst_executed.sum", "gpu__time_duration.sum", "dram__bytes.sum",
  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
  "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
  "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
  "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}

-- The threads of a block ({x, y, z} or a number), and the lanes its warps start with on average
-- (a block of 1 thread has warps of 1 lane: one thread per instruction is not divergence there).
local function launch_lanes(block)
  local threads = type(block) == "table" and (block[1] or block.x or 1) * (block[2] or block.y or 1) * (block[3] or block.z or 1)
    or tonumber(block) or 32
  return threads / math.ceil(threads / 32)
end

-- The verdict from the values (the collected metrics, derived values and occupancy), the kernel's
-- resources, the ceilings and the launch's block: {verdict, evidence (list of strings), findings}.
function M.judge(v, resources, ceilings, block)
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
  local sector_use = v["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"]
  local store_use = v["smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"]
  local threads_per_instruction = v["smsp__average_thread_inst_executed_per_inst_executed.ratio"]
  local lanes = launch_lanes(block)
  local ways = math.max(v.shared_ld_ways or 0, v.shared_st_ways or 0)
  local intensity = v.fp32_flop_per_byte
  local knee = ceilings and ceilings.fp32_gflops and ceilings.dram_copy_gbps and ceilings.fp32_gflops / ceilings.dram_copy_gbps
  local findings = {
    sol_compute_pct = sol_compute, sol_memory_pct = sol_memory, dram_pct = dram, l2_hit_pct = l2_hit,
    top_stalls = stalls, achieved_occupancy_pct = v.achieved_occupancy_pct, theoretical_occupancy_pct = v.theoretical_occupancy_pct,
    occupancy_limiter = v.occupancy_limiter, fp32_flop_per_byte = intensity, knee_flop_per_byte = knee,
    sector_use_pct = sector_use, store_sector_use_pct = store_use, threads_per_instruction = threads_per_instruction, shared_ways = ways,
    atomic_instructions = atomics, spill_bytes = resources and ((resources.spill_store_bytes or 0) + (resources.spill_load_bytes or 0)),
  }
  local evidence = {string.format("SoL compute %.0f%%, memory %.0f%% (DRAM %.0f%%)", sol_compute, sol_memory, dram)}
  if stalls[1] then
    local parts = {}
    for i = 1, math.min(3, #stalls) do parts[i] = string.format("%s %.0f%%", stalls[i].reason, stalls[i].pct) end
    evidence[#evidence + 1] = "stalls: " .. table.concat(parts, ", ")
  end
  local verdict
  -- the telltales first: each names a fix, whatever the throughput
  if atomics > 0 and atomics >= 0.02 * instructions and dram < 5 and l2_hit > 50 then
    verdict = "contended atomics"
    evidence[#evidence + 1] = string.format("%.0f atomic instructions (%.0f%% of all), L2 hit %.0f%% on the total's line, " ..
      "DRAM %.1f%%, lg_throttle %.1f%% and drain %.1f%% of stalls", atomics, 100 * atomics / math.max(1, instructions), l2_hit,
      dram, share.lg_throttle or 0, share.drain or 0)
  elseif ways >= 1.5 then
    verdict = "shared-memory bank conflicts"
    evidence[#evidence + 1] = string.format("%.1f wavefronts per shared request (1 is conflict-free); mio_throttle %.0f%%, " ..
      "short_scoreboard %.0f%% of stalls", ways, share.mio_throttle or 0, share.short_scoreboard or 0)
  elseif findings.spill_bytes and findings.spill_bytes > 0 and ((share.long_scoreboard or 0) > 20 or sol_memory > 40) then
    verdict = "register spills"
    evidence[#evidence + 1] = string.format("%d bytes of spill loads and stores per thread (ptxas)", findings.spill_bytes)
  elseif ((sector_use and sector_use < 50) or (store_use and store_use < 50)) and sol_memory > 30 then
    -- the worse of the two names the verdict; each one below half is evidence, with the traffic
    -- it multiplies (a sector moved for every few bytes used)
    verdict = (store_use or 100) < (sector_use or 100) and "uncoalesced global stores" or "uncoalesced global loads"
    if sector_use and sector_use < 50 then
      evidence[#evidence + 1] = string.format("loads use %.0f%% of the bytes of the sectors they fetch (read amplification " ..
        "%.1fx)", sector_use, 100 / math.max(sector_use, 1))
    end
    if store_use and store_use < 50 then
      evidence[#evidence + 1] = string.format("stores use %.0f%% of the bytes of the sectors they write (write " ..
        "amplification %.1fx)", store_use, 100 / math.max(store_use, 1))
    end
  elseif sol_memory >= 60 and sol_memory >= sol_compute then
    verdict = "memory-bound"
    if intensity and knee then evidence[#evidence + 1] = string.format("%.2f FLOP/byte, under the %.1f knee", intensity, knee) end
  elseif threads_per_instruction and threads_per_instruction < 0.75 * lanes then
    verdict = "branch divergence"
    evidence[#evidence + 1] = string.format("%.1f active threads per instruction of the %.0f its warps start with",
      threads_per_instruction, lanes)
  elseif sol_compute >= 60 then
    verdict = "compute-bound"
    if intensity and knee then evidence[#evidence + 1] = string.format("%.2f FLOP/byte, over the %.1f knee", intensity, knee) end
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
  findings.verdict = verdict
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
  local findings = M.judge(values, kernel:resources(), ceilings, spec.block)
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
