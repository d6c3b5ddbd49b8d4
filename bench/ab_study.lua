-- The A/B study of issue 29, in one run on one GPU, with a memory-bound SAXPY (kernels/saxpy.cu,
-- minimal) sized to about 0.1 ms:
--   A/A:  A and B the same launch, PAIRS decisions of gpuexp.ab (each its own seed, blocks added
--         until a 1% change is detectable or 30 s pass): the false calls of gpuexp ab, and of
--         NVBench's rule and compare's rule applied to the same samples pooled per side;
--   1%:   B runs the kernel over 1% more elements (an injected slowdown of about 1%, measured
--         here on long runs too), POWER_PAIRS decisions: how often each rule calls it slower.
-- Prints a Markdown table. When OUT is set, writes it to $OUT/ab_study.md with the raw output it
-- comes from, which bench/recompute/ab.lua turns into the same table: $OUT/decisions.csv (every
-- decision: its kind, seed and the three rules' verdicts, GPU and wall seconds, blocks, detectable
-- effect), $OUT/long_samples.csv (the long runs' samples of each side) and $OUT/settings.csv.
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

local function decide(b, seed)
  return gpuexp.ab{name = "saxpy", a = a, b = b, mde_pct = 1, budget_s = 30, block_ms = BLOCK_MS, seed = seed, quiet = true}
end

local decisions = {}
local function study(kind, b, pairs, first_seed)
  for i = 1, pairs do
    local r = decide(b, first_seed + i)
    decisions[#decisions + 1] = {kind = kind, seed = first_seed + i, verdict = r.verdict, nvbench = r.nvbench.verdict,
      compare = r.compare.verdict, gpu_s = r.gpu_s, wall_s = r.wall_s, blocks = r.summary.blocks, mde_pct = r.summary.mde_pct}
  end
end

local started = gpuexp.clock()
study("aa", a_again, PAIRS, 0)
study("slower", b_slow, POWER_PAIRS, 100000)
local settings = {gpu = dev.facts.name, elements = n, block_ms = BLOCK_MS, study_s = gpuexp.clock() - started}
local lines = dofile(gpuexp.script_dir .. "/ab_table.lua")(decisions, long_a, long_b, settings)
print(table.concat(lines, "\n"))
local out = os.getenv("OUT")
if out and out ~= "" then
  local function write(name, text)
    local file = assert(io.open(out .. "/" .. name, "w"))
    assert(file:write(text))
    assert(file:close())
  end
  write("ab_study.md", table.concat(lines, "\n") .. "\n")
  local function cell(v) return type(v) == "number" and string.format("%.17g", v) or tostring(v or "") end
  local COLUMNS = {"kind", "seed", "verdict", "nvbench", "compare", "gpu_s", "wall_s", "blocks", "mde_pct"}
  local rows = {table.concat(COLUMNS, ",")}
  for _, d in ipairs(decisions) do
    local cells = {}
    for k, name in ipairs(COLUMNS) do cells[k] = cell(d[name]) end
    rows[#rows + 1] = table.concat(cells, ",")
  end
  write("decisions.csv", table.concat(rows, "\n") .. "\n")
  rows = {"side,sample_ms"}
  for _, v in ipairs(long_a) do rows[#rows + 1] = "a," .. cell(v) end
  for _, v in ipairs(long_b) do rows[#rows + 1] = "b," .. cell(v) end
  write("long_samples.csv", table.concat(rows, "\n") .. "\n")
  write("settings.csv", string.format("gpu,elements,slow_elements,block_ms,study_s\n%s,%d,%d,%s,%s\n",
    (settings.gpu:gsub(",", " ")), n, slow_n, cell(BLOCK_MS), cell(settings.study_s)))
end
