-- N launches of an empty kernel from a Lua loop, one form: bound (l:launch()), table
-- (k:launch{...}) or none (the loop alone). bench/launch_overhead.sh runs it under callgrind with the
-- fake driver (bench/fake_driver.c), twice, and takes the instructions per launch from the difference.
local mode, launches = arg[1] or "bound", tonumber(arg[2]) or 100000
local kernel = gpuexp.compile{source = 'extern "C" __global__ void empty() {}'}:kernel("empty")
local bound = kernel:bind{grid = 1, block = 32, args = {}}
local config = {grid = 1, block = 32, args = {}}
if mode == "bound" then
  for _ = 1, launches do bound:launch() end
elseif mode == "table" then
  for _ = 1, launches do kernel:launch(config) end
else
  for _ = 1, launches do end
end
