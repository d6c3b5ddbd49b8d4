-- Kernel Tuner's convolution example (kernel_tuner 1.5.0's test/convolution.cu, placed by
-- bench/hopper/fetch.sh) with its 17 x 17 filter in __constant__ float d_filter[33*33], written
-- from Lua through program:global. Checked three ways: before the filter is written the output is
-- all zeros (the kernel reads the constant, not its unused filter argument); against a host
-- convolution at sampled points (corners and random ones); against the same file's
-- convolution_naive kernel (filter from a buffer) over the whole image. Then timed.
--   gpuexp bench/hopper/convolution.lua CONVOLUTION_CU OUT_DIR
local source, out_dir = assert(arg[1], "the path of convolution.cu"), arg[2] or "."
local dev = gpuexp.device()
local W, H, F = 4096, 4096, 17
local IW, IH = W + F - 1, H + F - 1
local params = {block_size_x = 16, block_size_y = 16, tile_size_x = 2, tile_size_y = 2, use_padding = 1,
  filter_width = F, filter_height = F, read_only = 0}
local program = gpuexp.compile{file = source, defines = params}
local kernel, naive = program:kernel("convolution_kernel"), program:kernel("convolution_naive")
local input = dev:alloc("f32", IW * IH):random{seed = 7, min = -1, max = 1}
local output, reference = dev:alloc("f32", W * H), dev:alloc("f32", W * H)
local filter_values = {}
math.randomseed(3)
for i = 1, F * F do filter_values[i] = math.random() * 2 - 1 end
local filter = dev:alloc("f32", F * F):copy_from(filter_values)
local launch = {grid = {W // (16 * 2), H // (16 * 2)}, block = {16, 16}, args = {output, input, filter}}

local d_filter = program:global("d_filter", "f32")
gpuexp.check(d_filter.count == 33 * 33, "d_filter holds 33 x 33 floats, got %d", d_filter.count)
d_filter:fill(0)
output:fill(1)
kernel:launch(launch)
local zero_ok = output:compare(dev:alloc("f32", W * H):fill(0), {rtol = 0, atol = 0})
gpuexp.check(zero_ok, "with a zero filter in constant memory the output is zero")

d_filter:copy_from(filter_values)
local back = d_filter:to_table(1, F * F)
for i = 1, F * F do -- read back as the f32 it was stored as
  local stored = string.unpack("<f", string.pack("<f", filter_values[i]))
  gpuexp.check(back[i] == stored, "d_filter[%d] read back: %s, wrote %s", i, back[i], stored)
end
kernel:launch(launch)
naive:launch{grid = {W // 16, H // 16}, block = {16, 16}, args = {reference, input, filter}}
local whole_ok, whole = output:compare(reference, {rtol = 1e-4, atol = 1e-4})

-- the host's convolution at sampled points
local samples, worst = {{0, 0}, {W - 1, 0}, {0, H - 1}, {W - 1, H - 1}, {W // 2, H // 2}}, 0
for _ = 1, 300 do samples[#samples + 1] = {math.random(0, W - 1), math.random(0, H - 1)} end
local checked_ok = true
for _, s in ipairs(samples) do
  local x, y = s[1], s[2]
  local sum = 0
  for i = 0, F - 1 do
    local row = input:to_table((y + i) * IW + x + 1, F)
    for j = 0, F - 1 do sum = sum + row[j + 1] * filter_values[i * F + j + 1] end
  end
  local got = output[y * W + x + 1]
  local err = math.abs(got - sum)
  worst = math.max(worst, err)
  if err > 1e-4 * math.max(1, math.abs(sum)) then checked_ok = false end
end
local t = kernel:measure(launch)
local lines = {
  "kernel_tuner convolution_kernel (test/convolution.cu), filter 17x17 in __constant__ d_filter, " ..
    string.format("block 16x16, tile 2x2, image %dx%d on %s", W, H, dev.name),
  string.format("zero filter gives zero output: %s", tostring(zero_ok)),
  string.format("host convolution at %d points: %s (max abs error %.3g)", #samples, checked_ok and "ok" or "MISMATCH", worst),
  string.format("whole image against convolution_naive: %s (%d mismatches, max abs error %.3g)", whole_ok and "ok" or "MISMATCH",
    whole.mismatches, whole.max_abs_error),
  string.format("median %.4f ms (%s, %d samples, noise %.2f%%)", t.median_ms, t.mode, t.samples, t.noise_pct),
}
local file = assert(io.open(out_dir .. "/convolution.txt", "w"))
for _, line in ipairs(lines) do print(line); file:write(line, "\n") end
file:close()
gpuexp.check(checked_ok and whole_ok, "the convolution is right")
