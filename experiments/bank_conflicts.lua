-- Seed 002 (Mojo GPU Puzzles #32): shared-memory bank conflicts, measured with the counters ncu
-- reads (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum and the wavefronts), in
-- process. Part 1: the seed's no-conflict and 2-way kernels (TPB 256, 8K elements, (x + 10) * 2).
-- Part 2: a column read of a 32-column tile, access stride 1..32, row padding 0 and 1, with the
-- conflict degree predicted from the index function beside the measured one.
--
--   gpuexp experiments/bank_conflicts.lua        (writes results/bank_conflicts_{seed,stride}.csv)

local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/bank_conflicts.cu"}
local out_base = (gpuexp.out or "results/bank_conflicts.csv"):gsub("%.csv$", "")
local TPB, SIZE = 256, 8 * 1024
local conflict_metrics = {"bank_conflicts", "gpu__time_duration.sum"}

-- Part 1 -------------------------------------------------------------------------------------
local input = dev:alloc("f32", SIZE):random{seed = 3, min = -100, max = 100}
local output = dev:alloc("f32", SIZE)
local expected
if not plan then
  expected = gpuexp.host("f32", SIZE)
  local values = input:to_table()
  for i = 1, SIZE do values[i] = (values[i] + 10) * 2 end
  expected:copy_from(values)
end

local seed_rows = gpuexp.sweep{
  name = "bank_conflicts_seed", out = out_base .. "_seed.csv",
  axes = {{"kernel", {"no_conflict", "two_way_conflict"}}},
  columns = {"median_ms", "ld_requests", "ld_wavefronts", "ld_conflicts", "st_requests", "st_wavefronts",
    "st_conflicts", "ld_ways", "st_ways", "verified"},
  run = function(p)
    local kernel = program:kernel(p.kernel)
    local launch = {grid = SIZE // TPB, block = TPB, args = {output, input, gpuexp.i32(SIZE)}}
    output:fill(0)
    kernel:launch(launch)
    local verified = not plan and (output:compare(expected, {rtol = 1e-6, atol = 1e-5})) or nil
    local t = kernel:time{grid = launch.grid, block = launch.block, args = launch.args, warmup = 10, reps = 200}
    local row = {median_ms = t.median_ms, verified = verified}
    launch.metrics = conflict_metrics
    local m, why = kernel:metrics(launch)
    if m then
      row.ld_requests = m["smsp__sass_inst_executed_op_shared_ld.sum"]
      row.ld_wavefronts = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
      row.ld_conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
      row.st_requests = m["smsp__sass_inst_executed_op_shared_st.sum"]
      row.st_wavefronts = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
      row.st_conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]
      row.ld_ways, row.st_ways = m.shared_ld_ways, m.shared_st_ways
    elseif not plan then
      row.status, row.error = "no_metrics", why
    end
    return row
  end,
}

-- Part 2 -------------------------------------------------------------------------------------
-- The conflict degree of one warp's access: the most distinct words any one bank must serve.
local function predicted_ways(stride, pad)
  local words_in_bank = {}
  local ways = 0
  for lane = 0, 31 do
    local logical = lane * stride
    local address = logical + (logical // 32) * pad
    local bank = address % 32
    words_in_bank[bank] = words_in_bank[bank] or {}
    if not words_in_bank[bank][address] then
      words_in_bank[bank][address] = true
      local count = 0
      for _ in pairs(words_in_bank[bank]) do count = count + 1 end
      if count > ways then ways = count end
    end
  end
  return ways
end

local strides = {}
for s = 1, 32 do strides[s] = s end
local BLOCKS, ITERATIONS = 264, 256
local sink = dev:alloc("f32", BLOCKS * TPB)
local strided = program:kernel("strided_read")
local stride_rows = gpuexp.sweep{
  name = "bank_conflicts_stride", out = out_base .. "_stride.csv",
  axes = {{"pad", {0, 1}}, {"stride", strides}},
  columns = {"predicted_ways", "measured_ld_ways", "ld_conflicts", "ld_wavefronts", "ld_requests", "median_ms"},
  run = function(p)
    local launch = {grid = BLOCKS, block = TPB, shared = 4 * 32 * (32 + p.pad),
      args = {sink, gpuexp.i32(p.stride), gpuexp.i32(p.pad), gpuexp.i32(ITERATIONS)}}
    local t = strided:time{grid = launch.grid, block = launch.block, shared = launch.shared, args = launch.args,
      warmup = 5, reps = 50}
    local row = {predicted_ways = predicted_ways(p.stride, p.pad), median_ms = t.median_ms}
    launch.metrics = {"bank_conflicts"}
    local m, why = strided:metrics(launch)
    if m then
      row.measured_ld_ways = m.shared_ld_ways
      row.ld_conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
      row.ld_wavefronts = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
      row.ld_requests = m["smsp__sass_inst_executed_op_shared_ld.sum"]
    elseif not plan then
      row.status, row.error = "no_metrics", why
    end
    return row
  end,
}

gpuexp.print_table(seed_rows, {"kernel", "median_ms", "ld_conflicts", "st_conflicts", "ld_ways", "st_ways", "verified", "status"})
gpuexp.print_table(stride_rows, {"pad", "stride", "predicted_ways", "measured_ld_ways", "ld_conflicts", "median_ms", "status"})
if plan then
  print("OFFLINE PLAN: kernels compiled and launches checked; no counters or timings")
  return
end

-- The lessons, checked on this run's numbers.
local lesson = gpuexp.lesson()
local by_kernel = {}
for _, row in ipairs(seed_rows) do by_kernel[row.kernel] = row end
local clean, conflicted = by_kernel.no_conflict, by_kernel.two_way_conflict
gpuexp.check(clean.verified and conflicted.verified, "both seed kernels compute (x + 10) * 2")
if clean.ld_ways and conflicted.ld_ways then
  local warps = SIZE // 32
  print(string.format("\nseed kernels: no_conflict %d/%d ld/st conflicts (%.2f/%.2f wavefronts per request); " ..
    "two_way_conflict %d/%d (%.2f/%.2f); the seed's A10G showed 0/0 and 256/256", clean.ld_conflicts,
    clean.st_conflicts, clean.ld_ways, clean.st_ways, conflicted.ld_conflicts, conflicted.st_conflicts,
    conflicted.ld_ways, conflicted.st_ways))
  lesson:expect(clean.ld_ways < 1.1 and clean.st_ways < 1.1, "no_conflict is about 1 wavefront per request")
  lesson:expect(math.abs(conflicted.ld_ways - 2) < 0.1 and math.abs(conflicted.st_ways - 2) < 0.1,
    "two_way_conflict is 2 wavefronts per request")
  lesson:expect(conflicted.ld_conflicts >= warps and conflicted.st_conflicts >= warps,
    string.format("two_way_conflict has at least one conflict per warp access (%d)", warps))
  local matched, total = 0, 0
  for _, row in ipairs(stride_rows) do
    if row.measured_ld_ways then
      total = total + 1
      if math.abs(row.measured_ld_ways - row.predicted_ways) <= 0.05 * row.predicted_ways + 0.05 then
        matched = matched + 1
      end
    end
  end
  print(string.format("stride sweep: measured conflict degree matches the prediction at %d of %d points", matched, total))
  lesson:expect(matched == total, "every stride point matches its predicted conflict degree")
end
lesson:report("conflicts follow the index function; padding a row by one word removes the column conflict")
