-- Launch results against host references on random data, for every element type path.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()

local program = gpuexp.compile{source = [[
extern "C" __global__ void axpy_f32(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void axpy_f64(double *y, const double *x, double a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void mix_i32(int *out, const int *in, unsigned int mul, int add, unsigned char shift, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = ((int)(in[i] * mul) + add) >> shift; }
extern "C" __global__ void grid2d(unsigned int *out, int width) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * width + x] = y * 1000 + x; }
extern "C" __global__ void dynamic_reverse(float *data, int n) {
  extern __shared__ float tile[];
  int t = threadIdx.x; tile[t] = data[t]; __syncthreads(); data[t] = tile[n - 1 - t]; }
]]}
local n = 100003 -- not a multiple of any block size
local x = dev:alloc("f32", n):random{seed = 11, min = -2, max = 2}
local y = dev:alloc("f32", n):random{seed = 12, min = -2, max = 2}
local hx, hy = x:to_table(), y:to_table()
local k = program:kernel("axpy_f32")
T.eq(#k:resources().params, 4, "four parameters from the PTX")
k:launch{grid = (n + 255) // 256, block = 256, args = {y, x, gpuexp.f32(1.75), gpuexp.i32(n)}}
local expected = gpuexp.host("f32", n)
local values = {}
for i = 1, n do values[i] = 1.75 * hx[i] + hy[i] end
expected:copy_from(values)
local ok, info = y:compare(expected, {rtol = 1e-6, atol = 1e-6})
T.ok(ok, "axpy_f32 matches the host reference: " .. tostring(info.mismatches) .. " mismatches")
T.ok(info.max_abs_error > 0 or info.max_abs_error == 0, "error reported")

-- a poisoned output shows every element was written
local out = dev:alloc("f64", n):fill(-12345)
local xd = dev:alloc("f64", n):random{seed = 3}
local xs = xd:to_table()
program:kernel("axpy_f64"):launch{grid = (n + 127) // 128, block = 128, args = {out, xd, gpuexp.f64(0.5), gpuexp.i64(n)}}
local dexpected = gpuexp.host("f64", n)
local dv = {}
for i = 1, n do dv[i] = 0.5 * xs[i] - 12345 end
dexpected:copy_from(dv)
T.ok((out:compare(dexpected, {rtol = 0, atol = 0})), "axpy_f64 exact")

local ints_in = dev:alloc("i32", n):random{seed = 4, min = -1000, max = 1000}
local ints_out = dev:alloc("i32", n):fill(7)
local iv = ints_in:to_table()
program:kernel("mix_i32"):launch{grid = (n + 511) // 512, block = 512,
  args = {ints_out, ints_in, gpuexp.u32(3), gpuexp.i32(-5), gpuexp.u8(1), gpuexp.i32(n)}}
local got = ints_out:to_table()
for i = 1, n, 97 do T.eq(got[i], (iv[i] * 3 - 5) // 2, "mix_i32 at " .. i) end -- >> on int is floor division

local width, height = 64, 48
local grid_out = dev:alloc("u32", width * height):fill(0)
program:kernel("grid2d"):launch{grid = {width // 16, height // 8}, block = {16, 8}, args = {grid_out, gpuexp.i32(width)}}
T.eq(grid_out[1], 0, "2D (0,0)"); T.eq(grid_out[width * height], (height - 1) * 1000 + width - 1, "2D last")
T.eq(grid_out[width * 5 + 7 + 1], 5 * 1000 + 7, "2D (7,5)")

-- dynamic shared memory, including more than the default 48 KB (raised automatically)
local big = dev.shared_per_block_optin_bytes // 4
local data = dev:alloc("f32", big):random{seed = 9}
local before = data:to_table()
local reverse = program:kernel("dynamic_reverse")
T.ok(big > 1024, "opt-in shared memory above 4 KB")
reverse:launch{grid = 1, block = 1024, shared = big * 4, args = {data, gpuexp.i32(1024)}}
T.eq(data[1], before[1024], "reversed first"); T.eq(data[1024], before[1], "reversed last")

-- buffers: device-to-device, pinned round trip, element access
local pinned = gpuexp.host("f32", n, {pinned = true})
T.eq(pinned.kind, "pinned", "pinned kind")
pinned:copy_from(y)
local back = dev:alloc("f32", n):copy_from(pinned)
T.ok((back:compare(y, {rtol = 0, atol = 0})), "pinned round trip")
back[5] = 99
T.eq(back[5], 99.0, "device element set/get")
local bound = k:bind{grid = (n + 255) // 256, block = 256, args = {back, x, gpuexp.f32(0), gpuexp.i32(n)}}
bound:launch()
T.eq(back[5], 99.0, "bound launch with alpha 0 leaves y")
dev:synchronize()
T.done()
