-- How to make kernels/roofline.cu's intensity<T> run at a given arithmetic intensity: it applies
-- k FMAs (2k + 6 FLOP) to one element in `every` and moves 2 x size bytes per element, so it runs
-- at (2k + 6) / (every x 2 x size) FLOP/byte. Used by experiments/roofline.lua and
-- experiments/hierarchical_roofline.lua:  local shape = dofile(gpuexp.resolve("kernels/roofline_shape.lua"))
-- shape(intensity, element_bytes) -> k, every
return function(intensity, size)
  local flop_per_element = intensity * 2 * size -- FLOP per element moved, to reach the intensity
  if flop_per_element >= 8 then return math.max(1, math.floor((flop_per_element - 6) / 2 + 0.5)), 1 end
  local every = 1
  while 8 / every > flop_per_element * (1 + 1e-9) do every = every * 2 end
  return 1, every
end
