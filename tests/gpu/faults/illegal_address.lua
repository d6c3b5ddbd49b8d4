-- A 6-point sweep whose point 3 writes to an illegal address (and, with "trap", point 5 traps).
local dev = gpuexp.device()
local program = gpuexp.compile{file = "faults.cu"}
local store, trap = program:kernel("store"), program:kernel("trap")
local out = dev:alloc("f32", 256):fill(0)
gpuexp.sweep{name = "illegal_address", out = arg[1], axes = {{"i", {1, 2, 3, 4, 5, 6}}},
  run = function(p)
    store:launch{grid = 1, block = 256, args = {out, gpuexp.i32(p.i == 3 and 1 or 0)}}
    if arg[2] == "trap" then trap:launch{grid = 1, block = 32, args = {out, gpuexp.i32(p.i == 5 and 1 or 0)}} end
    dev:synchronize()
    return {value = out[8]}
  end}
