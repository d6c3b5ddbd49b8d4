-- How to make kernels/roofline.cu's intensity<T> (and intensity_passes<T>) run at a given
-- arithmetic intensity, and the host's check of what it computed. Used by experiments/roofline.lua
-- and experiments/hierarchical_roofline.lua:
--   local roofline = dofile(gpuexp.resolve("kernels/roofline_shape.lua"))
local M = {}

-- k FMAs on one element in `every` (2k + 6 FLOP) on 2 x size bytes moved per element give
-- (2k + 6) / (every x 2 x size) FLOP/byte. -> k, every
function M.shape(intensity, size)
  local flop_per_element = intensity * 2 * size -- FLOP per element moved, to reach the intensity
  if flop_per_element >= 8 then return math.max(1, math.floor((flop_per_element - 6) / 2 + 0.5)), 1 end
  local every = 1
  while 8 / every > flop_per_element * (1 + 1e-9) do every = every * 2 end
  return 1, every
end

-- Whether y holds the kernel's chain (in double on the host, a = 0.999, b = 0.001) for 64 of the
-- n elements that run it; the run's arguments a and b must be those.
M.A, M.B = 0.999, 0.001
function M.verify(y, x, n, k, every)
  for probe = 0, 63 do
    local i = (probe * 7919 * every) % n
    i = i - i % every
    local v = x[i + 1]
    local c = {v, v + 1, v + 2, v + 3}
    local j = 0
    while j + 4 <= k do for q = 1, 4 do c[q] = c[q] * M.A + M.B end j = j + 4 end
    while j < k do c[1] = c[1] * M.A + M.B j = j + 1 end
    local expected = c[1] + c[2] + c[3] + c[4]
    if math.abs(y[i + 1] - expected) > 1e-4 * math.abs(expected) + 1e-5 then return false end
  end
  return true
end

return M
