-- gpuexp calibrate: the command over api/calibrate.lua.
local calibrate = require("gpuexp.api.calibrate")
local text = require("gpuexp.store.text")

local M = {}

function M.run(o)
  if o.positional[1] then return nil, "unknown argument '" .. o.positional[1] .. "'" end
  local force = o.force or false
  local found, problem = pcall(gpuexp.device)
  if not found then
    gpuexp.error("driver", string.format("measures this machine's GPU, and there is none to use (%s). " ..
      "A roofline plot without a GPU takes the peaks instead: gpuexp plot --roofline --peak-gflops G --peak-gbps B ...",
      type(problem) == "table" and problem.message or tostring(problem)))
  end
  local c = calibrate.run{force = force}
  local facts = gpuexp.device().facts
  print(text.format("%s (%s), driver CUDA %s%s", c.gpu, c.uuid, c.driver, c.from_cache and ", from the cache (--force to measure again)" or ""))
  print(string.format("  DRAM copy           %8.0f GB/s read+write  (%s; derived peak %.0f GB/s)", c.dram_copy_gbps,
    c.dram_copy_method, facts.peak_dram_gbps))
  print(string.format("  FP32 FMA            %8.0f GFLOP/s          (derived peak %.0f)", c.fp32_gflops, facts.peak_fp32_gflops))
  if c.l2_gbps then print(string.format("  L2 read             %8.0f GB/s", c.l2_gbps)) end
  print(string.format("  shared memory (L1)  %8.0f GB/s", c.shared_gbps))
  if c.fp64_gflops then print(string.format("  FP64 FMA            %8.0f GFLOP/s", c.fp64_gflops)) end
  local tensor = calibrate.tensor_types()
  for _, t in ipairs(tensor and tensor.TYPES or {}) do
    local rate = c["tensor_" .. t.name .. "_gflops"]
    if rate then
      print(string.format("  %-19s %8.0f %s (tensor cores, mma.sync)", t.label, rate, t.name == "int8" and "GOP/s   " or "GFLOP/s "))
    end
  end
  print(string.format("  host to device      %8.1f GB/s pinned", c.h2d_pinned_gbps))
  print(string.format("  device to host      %8.1f GB/s pinned", c.d2h_pinned_gbps))
  print(string.format("  knee (FP32 / copy)  %8.1f FLOP/byte", c.fp32_gflops / c.dram_copy_gbps))
end

return M
