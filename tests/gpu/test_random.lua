-- buffer:random on a device buffer runs on the GPU; its values must be the host generator's, bit
-- for bit, for every type and for ranges where rounding matters.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local n = 3 * 1024 * 1024 + 7 -- not a multiple of the grid
local cases = {
  {"f32", -1, 1}, {"f32", 0, 1e-3}, {"f32", -3.7, 1e6}, {"f64", -1, 1}, {"f64", -1e150, 1e150},
  {"i32", 0, 9}, {"i32", -2147483648, 2147483647}, {"u32", 0, 4294967295}, {"i64", -1e15, 1e15},
  {"u64", 0, 1e18}, {"u8", 0, 255}, {"i8", -128, 127}, {"i32", 2.5, 7.5},
}
for _, c in ipairs(cases) do
  local type, low, high = c[1], c[2], c[3]
  local spec = {seed = 12345, min = low, max = high}
  local on_gpu = dev:alloc(type, n):random(spec)
  local on_host = gpuexp.host(type, n):random(spec)
  local from_gpu = gpuexp.host(type, n):copy_from(on_gpu)
  local ok, info = from_gpu:compare(on_host, {rtol = 0, atol = 0})
  T.ok(ok, string.format("%s in [%g, %g]: the GPU's values are the host's (%s mismatches, first at %s: %s vs %s)",
    type, low, high, tostring(info.mismatches), tostring(info.first_mismatch), tostring(info.first_value),
    tostring(info.first_expected)))
  T.ok(from_gpu[1] >= low and from_gpu[n] <= high, type .. " values in range")
end
-- not all equal: a real fill
local b = dev:alloc("f32", 1024):random{seed = 1}
T.ok(b[1] ~= b[2] and b[2] ~= b[3], "different values")
T.done()
