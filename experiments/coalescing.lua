-- Seed 003: global-memory coalescing. out[i] = in[i * stride + offset] for 4-, 8- and 16-byte
-- elements, stride 1..32, offset 0 (aligned) and 1 (misaligned). Effective bandwidth counts the
-- bytes the program uses (read + written); sectors per request (CUPTI) and DRAM bytes say what the
-- hardware moved; the predicted sectors per warp request come from the index function.
--
--   gpuexp experiments/coalescing.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local types = {[4] = "float", [8] = "float2", [16] = "float4"}
local names = {}
for _, t in pairs(types) do names[#names + 1] = "strided_copy<" .. t .. ">" end
local program = gpuexp.compile{file = "kernels/coalescing.cu", names = names}
local OUT_BYTES = 64 * 1024 * 1024         -- written per point: larger than any L2
local MAX_STRIDE = 32
local input = dev:alloc("f32", (OUT_BYTES * MAX_STRIDE + 64) // 4):random{seed = 5}
local output = dev:alloc("f32", OUT_BYTES // 4)
local out = gpuexp.out or "results/coalescing.csv"

-- distinct 32-byte sectors one warp's 32 loads touch, over the requests the load instruction makes
local function predicted_sectors(size, stride, offset)
  local sectors = {}
  local count = 0
  for lane = 0, 31 do
    local first = (lane * stride + offset) * size
    for byte = first, first + size - 1, 32 do
      local s = byte // 32
      if not sectors[s] then sectors[s] = true count = count + 1 end
    end
    local last = (first + size - 1) // 32
    if not sectors[last] then sectors[last] = true count = count + 1 end
  end
  return count
end

local rows = gpuexp.sweep{
  name = "coalescing", out = out,
  axes = {{"element_bytes", {4, 8, 16}}, {"offset", {0, 1}}, {"stride", {1, 2, 4, 8, 16, 32}}},
  columns = {"median_ms", "effective_gbps", "moved_gbps", "sectors_per_request", "predicted_sectors_per_warp",
    "dram_read_bytes", "useful_read_bytes", "verified", "mode", "samples", "noise_pct", "sm_clock_mhz", "clock_throttled",
    "stop_reason"},
  run = function(p)
    local kernel = program:kernel("strided_copy<" .. types[p.element_bytes] .. ">")
    local n = OUT_BYTES // p.element_bytes
    local launch = {grid = (n + 255) // 256, block = 256,
      args = {output, input, gpuexp.i64(n), gpuexp.i32(p.stride), gpuexp.i32(p.offset)}}
    local row = {predicted_sectors_per_warp = predicted_sectors(p.element_bytes, p.stride, p.offset),
      useful_read_bytes = n * p.element_bytes}
    kernel:launch(launch)
    if not plan then -- spot-check 256 elements: the first float of element j is input[(j*stride+offset)*size/4]
      local ok, words = true, p.element_bytes // 4
      for probe = 0, 255 do
        local j = (probe * 2654435761) % n
        ok = ok and output[j * words + 1] == input[(j * p.stride + p.offset) * words + 1]
      end
      row.verified = ok
    end
    local t = kernel:measure{grid = launch.grid, block = launch.block, args = launch.args, mode = "cold",
      min_time_ms = 50, max_noise_pct = 1, timeout_s = 3}
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    if t.median_ms then row.effective_gbps = 2 * n * p.element_bytes / (t.median_ms * 1e-3) / 1e9 end
    launch.metrics = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
      "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"}
    local m, why = kernel:metrics(launch)
    if m then
      row.sectors_per_request = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
      row.dram_read_bytes = m["dram__bytes_read.sum"]
      row.moved_gbps = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / m["gpu__time_duration.sum"]
    elseif not plan then
      row.status, row.error = "no_metrics", why
    end
    return row
  end,
}
gpuexp.print_table(rows, {"element_bytes", "offset", "stride", "effective_gbps", "moved_gbps", "sectors_per_request",
  "predicted_sectors_per_warp", "verified", "status"})
if plan then print("OFFLINE PLAN: kernels compiled, launches checked; no timings or counters") return end
if gpuexp.run_options and gpuexp.run_options.only then -- the lesson compares every point
  print("a partial run (--only): the table above, no lesson")
  return
end
for _, row in ipairs(rows) do row.series = row.element_bytes .. " B, offset " .. row.offset end
local plot, why = gpuexp.try_plot(gpuexp.plot, {rows = rows, x = "stride", y = "effective_gbps", by = "series", logx = true,
  out = out:gsub("%.csv$", ".png"), title = "coalescing: useful bandwidth vs stride (" .. dev.name .. ")"})
print("wrote " .. out .. (plot and (" and " .. plot) or (" (plot not written: " .. why .. ")")))
local by = {}
for _, row in ipairs(rows) do
  gpuexp.check(row.verified, "%d-byte stride %d offset %d copied the right elements", row.element_bytes, row.stride, row.offset)
  by[row.element_bytes .. "/" .. row.offset .. "/" .. row.stride] = row
end
local lesson = gpuexp.lesson()
for _, size in ipairs({4, 8, 16}) do
  local unit, wide = by[size .. "/0/1"], by[size .. "/0/32"]
  print(string.format("%2d-byte elements: stride 1 %.0f GB/s, stride 32 %.0f GB/s useful (%.1fx less); misaligned stride 1 %.0f GB/s",
    size, unit.effective_gbps, wide.effective_gbps, unit.effective_gbps / wide.effective_gbps, by[size .. "/1/1"].effective_gbps))
  lesson:expect(wide.effective_gbps < unit.effective_gbps / 2,
    size .. "-byte elements: stride 32 is not at least 2x slower than stride 1")
end
lesson:report("strided access wastes sectors and useful bandwidth falls with the stride")
