-- The tuning study's spaces by name (bench/tune/study.lua, referee.lua):
--   local space = dofile(gpuexp.script_dir .. "/spaces.lua")(NAME)
-- conv: Kernel Tuner's convolution (NVRTC per configuration: bench/tune/convolution.lua); transpose:
-- kernels/tune_transpose.cu (nvcc per configuration); matmul: kernels/tune_matmul.cu; fake: no GPU, a
-- synthetic space (192 configurations, samples from a formula), so that the scripts are tested offline.
-- space.condition is the column a configuration's row must hold (gpuexp.tune's condition).
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."

local function fake()
  local space = {axes = {{"a", {1, 2, 3, 4, 5, 6, 7, 8}}, {"b", {1, 2, 3, 4, 5, 6, 7, 8}}, {"c", {1, 2, 3}}},
    sources = {}, options = {}}
  function space.run(p)
    local s, level = {}, math.max(5, gpuexp.measure_defaults.min_samples or 30)
    for i = 1, level do
      s[i] = (1 + 0.03 * ((p.a - 5) ^ 2 + (p.b - 3) ^ 2) + 0.01 * p.c) * (1 + 0.005 * math.sin(i * 12.9898 + p.a * 78.233 + p.b * 3.7 + p.c))
    end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s, verified = true}
  end
  return space
end

return function(name)
  local space
  if name == "conv" then
    space = dofile(here .. "/convolution.lua").new()
  elseif name == "transpose" then
    space = dofile(here .. "/../../kernels/tune_transpose.lua").new{n = 4096}
    space.condition = "verified"
  elseif name == "matmul" then
    space = dofile(here .. "/../../kernels/tune_matmul.lua").new{n = 1024}
    space.condition = "verified"
  elseif name == "fake" then
    space = fake()
    space.condition = "verified"
  else
    error("unknown space " .. tostring(name) .. " (conv, transpose, matmul or fake)", 2)
  end
  return space
end
