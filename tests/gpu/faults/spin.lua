-- A 4-point sweep whose point 2 launches a kernel that never returns; the sweep allows 3 s a point.
local dev = gpuexp.device()
local spin = gpuexp.compile{file = "faults.cu"}:kernel("spin")
local flag = dev:alloc("i32", 1):fill(0)
gpuexp.sweep{name = "spin", out = arg[1], timeout_s = 3, axes = {{"i", {1, 2, 3, 4}}},
  run = function(p)
    spin:launch{grid = 1, block = 1, args = {flag, gpuexp.i32(p.i == 2 and 1 or 0)}}
    dev:synchronize()
    return {value = p.i}
  end}
