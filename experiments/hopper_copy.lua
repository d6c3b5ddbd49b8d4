-- Hopper's loads three ways, on a tile several blocks need (kernels/hopper_copy.cu): out[j] = in + j
-- for j = 0 .. copies-1, one block per 64 x 64 f32 tile and copy, as a GEMM's operand tile is needed
-- by the blocks of its row. Plain loads (the copies after the first hit L2), cp.async into shared
-- memory, a TMA descriptor with one thread issuing the tile, and TMA multicast: the copies of a tile
-- form a thread block cluster and its first block loads the tile once into every block's shared
-- memory. Each against the measured DRAM ceiling (the bytes the work must move: the input once,
-- every copy written) and, for scale, the tensor ceiling a GEMM of these tiles would meet. Every
-- output checked against the input on the host.
--
--   gpuexp experiments/hopper_copy.lua [width=8192] [height=4096]

local plan = gpuexp.plan
local dev = gpuexp.device()
local WIDTH = math.tointeger(tonumber(arg[1] or "")) or 8192
local HEIGHT = math.tointeger(tonumber(arg[2] or "")) or 4096
local TILE = 64
assert(WIDTH % TILE == 0 and HEIGHT % TILE == 0, "width and height are multiples of 64")
local arch = plan and gpuexp.offline_arch or dev.arch
local cc = tonumber(arch:match("sm_(%d+)"))
local needs = {plain = 0, cp_async = 80, tma = 90, tma_multicast = 90}

local input = dev:alloc("f32", WIDTH * HEIGHT):random{seed = 17, min = 0, max = 1}
local programs, outputs = {}, {}
local ceilings = not plan and (gpuexp.ceilings() or gpuexp.calibrate{}) or nil
local tensor_gflops
for key, value in pairs(ceilings or {}) do
  if key:match("^tensor_.*_gflops$") and (not tensor_gflops or value > tensor_gflops) then tensor_gflops = value end
end

-- the host's check: every copy of a few tiles, corners and the middle, element by element
local function verify(out, copies)
  local probes = {{0, 0}, {WIDTH // TILE - 1, HEIGHT // TILE - 1}, {WIDTH // TILE // 2, HEIGHT // TILE // 3}}
  for _, probe in ipairs(probes) do
    for row = 0, TILE - 1, 9 do
      local first = (probe[2] * TILE + row) * WIDTH + probe[1] * TILE
      local want = input:to_table(first + 1, TILE)
      for j = 0, copies - 1 do
        local got = out:to_table(j * WIDTH * HEIGHT + first + 1, TILE)
        for i = 1, TILE do
          -- the kernel adds in f32: the sum rounded to a float, not Lua's double sum
          if got[i] ~= string.unpack("f", string.pack("f", want[i] + j)) then return false end
        end
      end
    end
  end
  return true
end

local rows = gpuexp.sweep{
  name = "hopper_copy",
  axes = {{"copies", {2, 4}}, {"variant", {"plain", "cp_async", "tma", "tma_multicast"}}},
  columns = {"median_ms", "gbps", "pct_of_dram", "speedup_vs_plain", "verified", "dram_ceiling_gbps",
    "tensor_ceiling_gflops", "cluster", "active_clusters", "mode", "samples", "noise_pct", "sm_clock_mhz",
    "clock_throttled", "stop_reason"},
  run = function(p)
    if cc < needs[p.variant] then
      return {status = "skipped", error = p.variant .. " needs sm_" .. needs[p.variant] .. " or newer; this is " .. arch}
    end
    -- sm_90a on Hopper: multicast is sm_90a's (ptxas advises against it for plain sm_90)
    programs[p.copies] = programs[p.copies] or gpuexp.compile{file = "kernels/hopper_copy.cu", defines = {COPIES = p.copies},
      arch = cc == 90 and "sm_90a" or nil}
    outputs[p.copies] = outputs[p.copies] or dev:alloc("f32", p.copies * WIDTH * HEIGHT)
    local out = outputs[p.copies]
    local kernel = programs[p.copies]:kernel("replicate_" .. p.variant)
    local launch = {grid = {WIDTH // TILE, HEIGHT // TILE, p.copies}, block = 256}
    if p.variant:match("^tma") then
      local map = gpuexp.tensor_map{buffer = input, dims = {WIDTH, HEIGHT}, box = {TILE, TILE}, l2_promotion = "256B"}
      launch.args = {map, out, gpuexp.i32(WIDTH), gpuexp.i32(HEIGHT)}
    else
      launch.args = {input, out, gpuexp.i32(WIDTH), gpuexp.i32(HEIGHT)}
    end
    local row = {}
    if p.variant == "tma_multicast" then
      launch.cluster = {1, 1, p.copies}
      row.cluster = p.copies
      row.active_clusters = not plan and kernel:occupancy{block = 256, cluster = launch.cluster}.active_clusters or nil
    end
    kernel:launch(launch)
    if not plan then
      out:fill(-1)
      kernel:launch(launch)
      row.verified = verify(out, p.copies)
    end
    local spec = {min_time_ms = 100, timeout_s = 3}
    for k, v in pairs(launch) do spec[k] = v end
    local t = kernel:measure(spec)
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    if t.median_ms then
      local bytes = 4.0 * WIDTH * HEIGHT * (1 + p.copies) -- the input read once, every copy written
      row.gbps = bytes / (t.median_ms * 1e-3) / 1e9
      row.dram_ceiling_gbps = ceilings and ceilings.dram_copy_gbps
      row.pct_of_dram = row.dram_ceiling_gbps and 100 * row.gbps / row.dram_ceiling_gbps
      row.tensor_ceiling_gflops = tensor_gflops
    end
    return row
  end,
}
for _, row in ipairs(rows) do
  for _, base in ipairs(rows) do
    if base.copies == row.copies and base.variant == "plain" and base.median_ms and row.median_ms then
      row.speedup_vs_plain = base.median_ms / row.median_ms
    end
  end
end
gpuexp.print_table(rows, {"copies", "variant", "median_ms", "gbps", "pct_of_dram", "speedup_vs_plain", "verified",
  "active_clusters", "status"})
if plan then print("OFFLINE PLAN: launches, clusters and descriptors checked; no timings") return end
for _, row in ipairs(rows) do
  gpuexp.check(row.status == "skipped" or row.verified, "%s with %d copies writes in + j", row.variant, row.copies)
end
if ceilings then
  print(string.format("ceilings: DRAM copy %.0f GB/s (%s); tensor %.0f GFLOP/s (a copy does no math: its bound is DRAM)",
    ceilings.dram_copy_gbps, ceilings.dram_copy_method, tensor_gflops or 0))
end
