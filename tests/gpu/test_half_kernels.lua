-- fp16 and bf16 kernels verified through gpuexp's f16/bf16 buffers with no helper kernel, and
-- gpuexp's conversions bit for bit against the device's own (NVRTC-compiled cuda_fp16/bf16/fp8
-- intrinsics) for every f16 and bf16 bit pattern, every fp8 pattern, and floats and doubles around
-- every value of each type (ties included) plus a float sweep.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local own = gpuexp.script_dir .. "/own/"

-- ---- the project's fp16 kernel taking a struct by value ----
local program = gpuexp.compile{file = own .. "names_kernels.cuh", names = {"own::scale_half"}}
local HalfParams = gpuexp.layout{{"scale", "f16"}, {"relu", "bool"}, {"bias", "f32"}, {"n", "i32"}, {"floor", "bf16"}}
T.eq(HalfParams.size, 16, "HalfParams: 16 bytes as C lays it out")
local n = 10007
local x = dev:alloc("f16", n):random{seed = 5, min = -4, max = 4}
local y, z = dev:alloc("f16", n):fill(0 / 0), dev:alloc("bf16", n):fill(0 / 0)
local params = {scale = 1.5, relu = true, bias = -0.25, n = n, floor = 0.125}
program:kernel("own::scale_half"):launch{grid = (n + 127) // 128, block = 128, args = {HalfParams(params), x, y, z}}
local hx = x:to_table()
local expect_y, expect_z = {}, {}
local scale, floor = gpuexp.f16(params.scale).value, gpuexp.bf16(params.floor).value
for i = 1, n do
  local v = hx[i] * scale + params.bias
  if v < 0 then v = 0 end
  expect_y[i], expect_z[i] = v, math.max(v, floor)
end
local ok, info = y:compare(gpuexp.host("f32", n):copy_from(expect_y))
T.ok(ok, string.format("fp16 kernel: %d mismatches, max %g ulps", info.mismatches, info.max_ulp_error))
T.ok(info.max_ulp_error <= 1, "within one f16 ulp of the exact result: " .. info.max_ulp_error)
ok, info = z:compare(gpuexp.host("f32", n):copy_from(expect_z))
T.ok(ok, string.format("bf16 output: %d mismatches, max %g ulps", info.mismatches, info.max_ulp_error))
T.eq(y:get(1) == y:get(1), true, "every element written (no NaN left)")

-- ---- conversions against the device's ----
local conversions = gpuexp.compile{source = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
extern "C" __global__ void fill(__half *h, __half v, __nv_bfloat16 *b, __nv_bfloat16 w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { h[i] = __hadd(v, __int2half_rn(i)); b[i] = w; }
}
extern "C" __global__ void decode(const unsigned short *bits, float *out, int type, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  unsigned short b = bits[i];
  if (type == 0) out[i] = __half2float(__ushort_as_half(b));
  else if (type == 1) out[i] = __bfloat162float(__ushort_as_bfloat16(b));
  else out[i] = __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, type == 2 ? __NV_E4M3 : __NV_E5M2)));
}
extern "C" __global__ void encode_float(const float *in, unsigned short *out, int type, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  float v = in[i];
  if (type == 0) out[i] = __half_as_ushort(__float2half_rn(v));
  else if (type == 1) out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else out[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, type == 2 ? __NV_E4M3 : __NV_E5M2);
}
extern "C" __global__ void encode_double(const double *in, unsigned short *out, int type, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  double v = in[i];
  if (type == 0) out[i] = __half_as_ushort(__double2half(v));
  else if (type == 1) out[i] = __bfloat16_as_ushort(__double2bfloat16(v));
  else out[i] = __nv_cvt_double_to_fp8(v, __NV_SATFINITE, type == 2 ? __NV_E4M3 : __NV_E5M2);
}
]]}
local decode, encode_float, encode_double = conversions:kernel("decode"), conversions:kernel("encode_float"),
  conversions:kernel("encode_double")

-- scalars by value: __half and __nv_bfloat16 parameters
local fill_h, fill_b = dev:alloc("f16", 64), dev:alloc("bf16", 64)
conversions:kernel("fill"):launch{grid = 1, block = 64, args = {fill_h, gpuexp.f16(0.1), fill_b, gpuexp.bf16(3.14159), gpuexp.i32(64)}}
local fills = fill_h:to_table()
for i = 1, 64 do T.eq(fills[i], gpuexp.f16(gpuexp.f16(0.1).value + (i - 1)).value, "f16 scalar + " .. (i - 1)) end
T.eq(fill_b[64], 3.140625, "bf16 scalar")

local function launch(kernel, input, output, type_index, count)
  kernel:launch{grid = (count + 255) // 256, block = 256, args = {input, output, gpuexp.i32(type_index), gpuexp.i32(count)}}
end

for type_index, name in ipairs{"f16", "bf16", "fp8_e4m3", "fp8_e5m2"} do
  type_index = type_index - 1
  local patterns = (name == "f16" or name == "bf16") and 65536 or 256
  -- decode: every pattern
  local list = {}
  for b = 0, patterns - 1 do list[b + 1] = b end
  local bits = dev:alloc("u16", patterns):copy_from(list)
  local device_values = dev:alloc("f32", patterns)
  launch(decode, bits, device_values, type_index, patterns)
  local got = device_values:to_table()
  local decoded = {}
  local mismatches = 0
  for b = 0, patterns - 1 do
    local ours = gpuexp.from_bits(name, b).value
    if ours == ours then decoded[#decoded + 1] = ours end
    local theirs = got[b + 1]
    if not ((ours ~= ours and theirs ~= theirs) or ours == theirs) then
      mismatches = mismatches + 1
      if mismatches < 5 then print(name, "decode", b, ours, theirs) end
    end
  end
  T.eq(mismatches, 0, name .. ": every pattern decodes as the device decodes it")
  -- encode: every value, the midpoints to its neighbour and a hair either side, specials, a sweep
  local inputs = {0 / 0, math.huge, -math.huge, 1e30, -1e30, 0.0, -0.0, 1e-30}
  table.sort(decoded)
  for i = 1, #decoded - 1 do
    local a, b = decoded[i], decoded[i + 1]
    if a == a and b == b and a ~= b and a > -math.huge and b < math.huge then
      local middle = (a + b) / 2
      inputs[#inputs + 1] = a
      inputs[#inputs + 1] = middle
      inputs[#inputs + 1] = middle * (1 + 2 ^ -40)
      inputs[#inputs + 1] = middle * (1 - 2 ^ -40)
    end
  end
  for i = 0, 20000 do inputs[#inputs + 1] = (i - 10000) * 0.37 * 2 ^ ((i % 60) - 30) end
  local count = #inputs
  for _, precision in ipairs{"f32", "f64"} do
    local input = dev:alloc(precision, count):copy_from(inputs)
    local device_bits = dev:alloc("u16", count)
    launch(precision == "f32" and encode_float or encode_double, input, device_bits, type_index, count)
    local from_device = device_bits:to_table()
    local values = input:to_table() -- as stored (f32 rounds the inputs first: gpuexp then rounds that value)
    mismatches = 0
    for i = 1, count do
      -- (a NaN with its sign bit set: the device's conversions from a double keep the sign (an H200
      -- gave 0xfe00 for f16, 0xff for fp8); gpuexp gives every NaN the canonical NaN of the float
      -- conversion, as documented: the float column above checks that one bit for bit)
      if precision == "f64" and values[i] ~= values[i] then from_device[i] = gpuexp[name](0 / 0).bits end
      local ours = gpuexp[name](values[i]).bits
      if ours ~= from_device[i] then
        mismatches = mismatches + 1
        if mismatches < 5 then print(name, precision, "encode", string.format("%.17g", values[i]), ours, from_device[i]) end
      end
    end
    T.eq(mismatches, 0, string.format("%s from %s: %d values encode as the device encodes them", name, precision, count))
  end
end
T.done()
