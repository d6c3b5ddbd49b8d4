-- CuPy's cooperative-groups grid-sync kernel (cupy 13.6.0, tests/cupy_tests/core_tests/test_raw.py,
-- _test_grid_sync; placed by bench/hopper/fetch.sh as grid_sync.cu): y = x1 everywhere, a grid-wide
-- sync, then each thread adds x2 to elements other blocks wrote. Launched cooperatively with the
-- largest grid that can be resident at once (a grid-stride loop covers n), verified exactly against
-- x1 + x2 as CuPy's test does; the grid CuPy's test asks for (n*n/block blocks) is refused before
-- the driver sees it, with the resident limit in the message.
--   gpuexp bench/hopper/grid_sync.lua GRID_SYNC_CU OUT_DIR
local source, out_dir = assert(arg[1], "the path of grid_sync.cu"), arg[2] or "."
local dev = gpuexp.device()
local program = gpuexp.compile{file = source}
local kernel = program:kernel("test_grid_sync")
local lines = {}
for _, case in ipairs({{n = 1000, block = 64}, {n = 1000, block = 256}, {n = 100, block = 256}}) do
  local count = case.n * case.n
  local x1, x2, y = dev:alloc("f32", count), dev:alloc("f32", count):fill(1), dev:alloc("f32", count):fill(0)
  local values = {}
  for i = 1, count do values[i] = i - 1 end
  x1:copy_from(values)
  local expected = gpuexp.host("f32", count)
  for i = 1, count do values[i] = i end
  expected:copy_from(values)
  local wanted = (count + case.block - 1) // case.block -- CuPy's grid
  local resident = kernel:occupancy{block = case.block}.active_blocks_per_sm * dev.sm_count
  local grid = math.min(wanted, resident)
  local refused = "no (it fits)"
  if wanted > resident then
    local ok, err = pcall(kernel.launch, kernel, {grid = wanted, block = case.block, cooperative = true,
      args = {x1, x2, y, gpuexp.i32(count)}})
    refused = ok and "NOT refused" or (type(err) == "table" and err.message or tostring(err))
  end
  kernel:launch{grid = grid, block = case.block, cooperative = true, args = {x1, x2, y, gpuexp.i32(count)}}
  local ok, info = y:compare(expected, {rtol = 0, atol = 0})
  lines[#lines + 1] = string.format("n=%d block=%d: grid %d of %d wanted (%d resident): y == x1 + x2 %s (%d mismatches); " ..
    "CuPy's grid refused: %s", case.n, case.block, grid, wanted, resident, ok and "exactly" or "NOT", info.mismatches, refused)
  gpuexp.check(ok, "grid sync n=%d block=%d", case.n, case.block)
  gpuexp.check(wanted <= resident or not refused:match("^NOT"), "an oversized cooperative grid is refused")
end
local file = assert(io.open(out_dir .. "/grid_sync.txt", "w"))
file:write("cupy 13.6.0 test_raw.py _test_grid_sync on ", dev.name, "\n")
for _, line in ipairs(lines) do print(line); file:write(line, "\n") end
file:close()
