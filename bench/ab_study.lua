-- The A/B study of issue 29, in one run on one GPU, with a memory-bound SAXPY (kernels/saxpy.cu,
-- minimal) sized to about 0.1 ms:
--   A/A:  A and B the same launch, PAIRS decisions of gpuexp.ab (each its own seed, blocks added
--         until a 1% change is detectable or 30 s pass): the false calls of gpuexp ab, and of
--         NVBench's rule and compare's rule applied to the same samples pooled per side;
--   1%:   B runs the kernel over 1% more elements (an injected slowdown of about 1%, measured
--         here on long runs too), POWER_PAIRS decisions: how often each rule calls it slower.
-- Prints a Markdown table, and writes it to $OUT/ab_study.md when OUT is set.
--   gpuexp bench/ab_study.lua [PAIRS=200] [POWER_PAIRS=100] [BLOCK_MS=5]
local PAIRS = tonumber(arg[1]) or 200
local POWER_PAIRS = tonumber(arg[2]) or 100
local BLOCK_MS = tonumber(arg[3]) or 5
local TARGET_MS = 0.1

local dev = gpuexp.device()
local kernel = gpuexp.compile{file = "kernels/saxpy.cu"}:kernel("minimal")
if gpuexp.plan then
  kernel:bind{grid = 1, block = 256, args = {dev:alloc("f32", 256), dev:alloc("f32", 256), gpuexp.f32(1e-7), gpuexp.i32(256)}}
  print("offline plan: the kernel compiles and its launch is checked; nothing measured")
  return
end

-- sized to about TARGET_MS: a first look at 16M elements, scaled
local function launch_of(x, y, n)
  return kernel:bind{grid = (n + 255) // 256, block = 256, args = {y, x, gpuexp.f32(1e-7), gpuexp.i32(n)}}
end
local probe_n = 16 * 1024 * 1024
local px, py = dev:alloc("f32", probe_n):fill(1), dev:alloc("f32", probe_n):fill(1)
local probe_ms = gpuexp.stats(launch_of(px, py, probe_n):time{warmup = 20, reps = 50}.samples_ms).median
px:free(); py:free()
local n = math.floor(probe_n * TARGET_MS / probe_ms / 256) * 256
local slow_n = math.floor(n * 1.01 / 256) * 256
local x, y = dev:alloc("f32", slow_n):fill(1), dev:alloc("f32", slow_n):fill(1)
local a = launch_of(x, y, n)
local a_again = launch_of(x, y, n) -- another bound launch of the same kernel and data: A/A
local b_slow = launch_of(x, y, slow_n)

-- the true size of the injected change, on long interleaved runs
local long_a, long_b = {}, {}
for _ = 1, 20 do
  for _, v in ipairs(a:time{warmup = 5, reps = 200}.samples_ms) do long_a[#long_a + 1] = v end
  for _, v in ipairs(b_slow:time{warmup = 5, reps = 200}.samples_ms) do long_b[#long_b + 1] = v end
end
local true_change = (gpuexp.stats(long_b).median / gpuexp.stats(long_a).median - 1) * 100

local function decide(b, seed)
  return gpuexp.ab{name = "saxpy", a = a, b = b, mde_pct = 1, budget_s = 30, block_ms = BLOCK_MS, seed = seed, quiet = true}
end

local function study(b, pairs, first_seed)
  local counts = {ab = 0, nvbench = 0, compare = 0}
  local gpu, blocks, mde, wall = {}, {}, {}, {}
  for i = 1, pairs do
    local r = decide(b, first_seed + i)
    if r.verdict ~= "same" then counts.ab = counts.ab + 1 end
    if r.nvbench.verdict ~= "same" then counts.nvbench = counts.nvbench + 1 end
    if r.compare.verdict ~= "same" then counts.compare = counts.compare + 1 end
    gpu[i], blocks[i], mde[i], wall[i] = r.gpu_s, r.summary.blocks, r.summary.mde_pct, r.wall_s
  end
  return counts, gpuexp.stats(gpu), gpuexp.stats(blocks), gpuexp.stats(mde), gpuexp.stats(wall)
end

local started = gpuexp.clock()
local aa, aa_gpu, aa_blocks, aa_mde, aa_wall = study(a_again, PAIRS, 0)
local slow, slow_gpu, slow_blocks, slow_mde, slow_wall = study(b_slow, POWER_PAIRS, 100000)

local lines = {}
local function say(text) print(text); lines[#lines + 1] = text end
say(string.format("# gpuexp ab study: %s, SAXPY over %d elements (%.3f ms), blocks of about %g ms a side",
  dev.facts.name, n, gpuexp.stats(long_a).median, BLOCK_MS))
say("")
say(string.format("Injected slowdown: B over 1%% more elements, %+.2f%% on 20 x 200 interleaved launches a side.",
  true_change))
say("")
say("| comparison | decisions | gpuexp ab (paired) | NVBench's rule, same samples | compare's rule, same samples | GPU s per decision, median (max) | wall s, median (max) | blocks, median | detectable effect, median |")
say("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
say(string.format("| A/A: false calls | %d | %d (%.1f%%) | %d (%.1f%%) | %d (%.1f%%) | %.2f (%.2f) | %.2f (%.2f) | %g | %.2f%% |",
  PAIRS, aa.ab, 100 * aa.ab / PAIRS, aa.nvbench, 100 * aa.nvbench / PAIRS, aa.compare, 100 * aa.compare / PAIRS,
  aa_gpu.median, aa_gpu.max, aa_wall.median, aa_wall.max, aa_blocks.median, aa_mde.median))
say(string.format("| 1%% slower: found | %d | %d (%.0f%%) | %d (%.0f%%) | %d (%.0f%%) | %.2f (%.2f) | %.2f (%.2f) | %g | %.2f%% |",
  POWER_PAIRS, slow.ab, 100 * slow.ab / POWER_PAIRS, slow.nvbench, 100 * slow.nvbench / POWER_PAIRS, slow.compare,
  100 * slow.compare / POWER_PAIRS, slow_gpu.median, slow_gpu.max, slow_wall.median, slow_wall.max, slow_blocks.median,
  slow_mde.median))
say("")
say(string.format("gpuexp ab: slower when the Wilcoxon signed-rank test of the block ratios rejects at 0.005 and the " ..
  "bootstrap 99.5%% interval is above 1; blocks added until a 1%% change is detectable at 90%% power or 30 s pass. " ..
  "Study time %.0f s.", gpuexp.clock() - started))
local out = os.getenv("OUT")
if out and out ~= "" then
  local file = assert(io.open(out .. "/ab_study.md", "w"))
  file:write(table.concat(lines, "\n"), "\n")
  file:close()
end
