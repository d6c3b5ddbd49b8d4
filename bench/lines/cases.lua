-- The line-level regressions of issue 38: seeded kernels of 50-500 lines and, for each, one source
-- line injected or changed with a known cause. A case is {id, cause, family, base (CUDA source),
-- new (CUDA source), line (the new source's line that carries the cause), kind ("added" or
-- "changed"), iters, ...}. Every kernel has the same signature:
--   case_kernel(float *out, const float *in, int n, int iters, int inj_mask, int inj_wmask, int inj_reps)
-- and the injected line runs on the iterations k with (k & inj_mask) == 0 in the warps w (of the
-- block) with (w & inj_wmask) == 0, inj_reps times: the measurement (measure.lua) sizes the
-- regression to 1-10% with these three launch arguments alone (no compile per size), from 1/512 of
-- the iterations' warps up (STRENGTHS). A barrier is never masked by warp (the whole block must
-- reach it). The base kernel ignores them. The loop is not unrolled (#pragma unroll 1), in both
-- builds, so the injected line does not change how the compiler unrolls the body around it.
--
-- The kernel: a prologue (a lookup table of 8 floats indexed by constants, eight register values,
-- a shared table of 1024 floats filled once), then a loop of `iters` iterations whose body is
-- `statements` lines drawn from the family's mix (FMAs, inlined helpers, shared-table reads
-- without conflicts, coalesced global loads, lookups, integer-derived terms, selects), then one
-- store. Values stay bounded (every combination is a contraction), so no slow path is ever taken.
-- The random stream is the corpus generator's (bench/corpus/generate.lua: xorshift64).
local M = {}

M.SEED = 38  -- the development seed: the run in bench/lines/records/h100 (a held-out run names its own)
M.COUNT = 44 -- cases a run (11 causes x 4)
M.N = 1 << 22 -- floats of in and out (16 MiB each)
M.BLOCK = 256

-- the corpus generator's seeded stream (bench/corpus/generate.lua), shuffle included
M.generator = dofile((debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".") .. "/../corpus/generate.lua").generator

-- a coefficient, as CUDA text
local function c(rng, low, high) return string.format("%.4ff", rng.uniform(low or 0.2, high or 0.5)) end
local function reg(rng) return "a" .. rng.int(0, 7) end

-- The statements of a loop body, by kind; each returns one line of CUDA (no indentation). Each
-- reads the register it writes (so no statement is dead code the compiler drops) and is a
-- contraction on values within +-2 (so none ever overflows).
local STATEMENTS = {
  fma = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s + %s * %s;", x, x, c(rng), reg(rng), c(rng, 0.1, 0.4)) end,
  fmaf = function(rng) local x = reg(rng)
    return string.format("%s = fmaf(%s, %s, %s * %s);", x, x, c(rng), reg(rng), c(rng, 0.1, 0.4)) end,
  product = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s * %s + %s;", x, x, reg(rng), c(rng, 0.05, 0.2), c(rng, 0.1, 0.3)) end,
  minmax = function(rng) local x = reg(rng)
    return string.format("%s = fmaxf(%s * %s, %s * %s);", x, x, c(rng), reg(rng), c(rng)) end,
  helper = function(rng) local x = reg(rng)
    return string.format("%s = helper%d(%s, %s);", x, rng.int(0, 3), x, reg(rng)) end,
  shared = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s + sh[(tid + k * %d) & 1023] * %s;", x, x, c(rng), rng.int(1, 97), c(rng, 0.1, 0.3)) end,
  global = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s + in[(i + k * %d + %d) & mask_n] * %s;", x, x, c(rng), 4096 * rng.int(1, 7),
      rng.int(0, 255) * 32, c(rng, 0.1, 0.3)) end,
  lut = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s + lut[%d] * %s;", x, x, c(rng), rng.int(0, 7), c(rng, 0.1, 0.3)) end,
  -- the one line of every body that reads tab (a per-thread table indexed by constants: registers)
  tab = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s + tab[%d] * %s;", x, x, c(rng), rng.int(0, 7), c(rng, 0.1, 0.3)) end,
  integer = function(rng) local x = reg(rng)
    return string.format("%s = %s * %s + (float)((k * %d + tid) & 15) * %s;", x, x, c(rng), rng.int(3, 29),
      c(rng, 0.005, 0.02)) end,
  select = function(rng) local x, z = reg(rng), reg(rng)
    return string.format("%s = (%s > %s) ? %s * %s : %s * %s;", x, x, z, x, c(rng), z, c(rng)) end,
}

-- The families: how often each kind of statement is drawn.
M.FAMILIES = {
  compute = {fma = 6, fmaf = 4, product = 2, minmax = 2, helper = 3, select = 1, integer = 1, lut = 1},
  shared = {fma = 4, fmaf = 2, shared = 5, helper = 1, minmax = 1, lut = 1, integer = 1},
  memory = {fma = 5, fmaf = 2, global = 2, shared = 1, helper = 1, lut = 1, select = 1},
  mixed = {fma = 4, fmaf = 2, product = 1, minmax = 1, helper = 2, shared = 2, global = 1, lut = 1, integer = 1, select = 1},
}
M.FAMILY_ORDER = {"compute", "shared", "memory", "mixed"}

local function draw_kind(rng, mix)
  local total = 0
  for _, name in ipairs(M.STATEMENT_ORDER) do total = total + (mix[name] or 0) end
  local pick = rng.float() * total
  for _, name in ipairs(M.STATEMENT_ORDER) do
    pick = pick - (mix[name] or 0)
    if pick < 0 then return name end
  end
  return "fma"
end
M.STATEMENT_ORDER = {"fma", "fmaf", "product", "minmax", "helper", "shared", "global", "lut", "integer", "select"}

-- Where the injected line runs: the iterations and warps it picks (PICKED), and how often (GUARD);
-- a barrier's guard picks iterations alone (UNIFORM_GUARD).
local PICKED = "((k & inj_mask) == 0 && (warp & inj_wmask) == 0)"
local GUARD = "if " .. PICKED .. " for (int r = 0; r < inj_reps; ++r) "
local UNIFORM_GUARD = "if ((k & inj_mask) == 0) for (int r = 0; r < inj_reps; ++r) "

-- The causes: insert(rng, body) -> a new line for the loop body (added), or change(rng, body,
-- kinds) -> the index of a body line and its new text (changed). A change keeps the old text on
-- the iterations the guard does not pick, so the size is set the same way.
M.CAUSES = {
  extra_load = {insert = function(rng) local x = reg(rng)
    return GUARD .. string.format("%s = %s * %s + in[(i * 33 + k * 977 + r * 4099) & mask_n] * %s;", x, x, c(rng, 0.6, 0.9),
      c(rng, 0.05, 0.1)) end},
  barrier = {uniform = true, insert = function() return UNIFORM_GUARD .. "__syncthreads();" end},
  division = {insert = function(rng) local x, z = reg(rng), reg(rng)
    return GUARD .. string.format("%s = %s / (%s * %s + 1.5f);", x, x, z, z) end},
  extra_instructions = {insert = function(rng) local x = reg(rng)
    return GUARD .. string.format("{ %s = %s * %s + %s * %s; %s = %s * %s + %s * %s; }", x, x, c(rng), reg(rng), c(rng, 0.1, 0.4),
      x, x, c(rng), reg(rng), c(rng, 0.1, 0.4)) end},
  divergent_branch = {insert = function(rng) local x = reg(rng)
    return string.format("if (%s && ((tid & 3) == %d)) for (int r = 0; r < inj_reps; ++r) %s = %s * %s + %s * %s;",
      PICKED, rng.int(0, 3), x, x, c(rng), reg(rng), c(rng, 0.1, 0.4)) end},
  transcendental = {insert = function(rng) local x = reg(rng)
    return GUARD .. string.format("%s = __sinf(%s) * %s + %s * %s;", x, reg(rng), c(rng), x, c(rng)) end},
  atomic = {insert = function(rng)
    return GUARD .. string.format("atomicAdd(&out[(blockIdx.x + r) & 15], %s * 1e-9f);", reg(rng)) end},
  fp64 = {kinds = {"fma"}, change = function(rng, line)
    local x, y, cy, z, cz = line:match("^(a%d) = (a%d) %* ([%d%.]+)f %+ (a%d) %* ([%d%.]+)f;$")
    return string.format("%s = %s ? (float)((double)%s * %s + (double)%s * %s) : %s * %sf + %s * %sf;",
      x, PICKED, y, cy, z, cz, y, cy, z, cz) end},
  local_array = {kinds = {"tab"}, change = function(rng, line)
    local x, y, cy, index, cl = line:match("^(a%d) = (a%d) %* ([%d%.]+f) %+ tab%[(%d)%] %* ([%d%.]+f);$")
    return string.format("%s = %s * %s + tab[%s ? ((k + tid) & 7) : %s] * %s;", x, y, cy, PICKED, index, cl) end},
  bank_conflict = {kinds = {"shared"}, change = function(rng, line)
    local x, y, cy, stride, cs = line:match("^(a%d) = (a%d) %* ([%d%.]+f) %+ sh%[%(tid %+ k %* (%d+)%) & 1023%] %* ([%d%.]+f);$")
    return string.format("%s = %s * %s + sh[((%s) ? (tid * 32) : tid) + k * %s & 1023] * %s;",
      x, y, cy, PICKED, stride, cs) end},
  uncoalesced = {kinds = {"global"}, change = function(rng, line)
    local x, y, cy, step, offset, cg = line:match("^(a%d) = (a%d) %* ([%d%.]+f) %+ in%[%(i %+ k %* (%d+) %+ (%d+)%) & mask_n%] %* ([%d%.]+f);$")
    return string.format("%s = %s * %s + in[(((%s) ? (i * 32) : i) + k * %s + %s) & mask_n] * %s;",
      x, y, cy, PICKED, step, offset, cg) end},
}
M.CAUSE_ORDER = {"extra_load", "barrier", "division", "fp64", "local_array", "divergent_branch", "bank_conflict",
  "uncoalesced", "extra_instructions", "transcendental", "atomic"}

local HELPERS = [[
__device__ __forceinline__ float helper0(float x, float y)
{
    float t = x * 0.375f + y * 0.25f;
    return fmaxf(t, -t * 0.5f);
}
__device__ __forceinline__ float helper1(float x, float y)
{
    float t = x * y * 0.125f;
    return t + 0.25f * x;
}
__device__ __forceinline__ float helper2(float x, float y)
{
    float t = fminf(x, y) * 0.5f;
    return t + 0.125f;
}
__device__ __forceinline__ float helper3(float x, float y)
{
    float t = (x - y) * 0.3f;
    return t * 0.75f + y * 0.2f;
}
]]

-- The kernel's source around a loop body (a list of lines): {text, first} where first is the
-- source line of the body's first statement.
local function kernel_source(id, family, body)
  local head = {
    string.format("// generated by bench/lines/cases.lua: case %s, family %s (%d statements a loop)", id, family, #body),
    HELPERS,
    "extern \"C\" __global__ void case_kernel(float *out, const float *in, int n, int iters, int inj_mask, int inj_wmask,",
    "                                         int inj_reps)",
    "{",
    "    __shared__ float sh[1024];",
    "    const int tid = threadIdx.x;",
    "    const int warp = tid >> 5;",
    "    const int i = blockIdx.x * blockDim.x + tid;",
    "    const int mask_n = n - 1;",
    "    float lut[8];",
  }
  for j = 0, 7 do head[#head + 1] = string.format("    lut[%d] = in[(i + %d) & mask_n] * 0.5f;", j, j * 64) end
  head[#head + 1] = "    float tab[8];"
  for j = 0, 7 do head[#head + 1] = string.format("    tab[%d] = in[(i + %d) & mask_n] * 0.25f;", j, j * 32 + 7) end
  for j = 0, 7 do head[#head + 1] = string.format("    float a%d = in[(i * 8 + %d) & mask_n];", j, j) end
  for j = 0, 3 do head[#head + 1] = string.format("    sh[tid + %d] = in[(blockIdx.x * 1024 + tid + %d) & mask_n];", j * 256, j * 256) end
  head[#head + 1] = "    __syncthreads();"
  head[#head + 1] = "#pragma unroll 1"
  head[#head + 1] = "    for (int k = 0; k < iters; ++k) {"
  local text = table.concat(head, "\n") .. "\n"
  local _, newlines = text:gsub("\n", "\n")
  local first = newlines + 1
  local lines = {}
  for j, statement in ipairs(body) do lines[j] = "        " .. statement end
  local tail = {"    }", "    out[i & mask_n] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;", "}", ""}
  return text .. table.concat(lines, "\n") .. "\n" .. table.concat(tail, "\n"), first
end

-- The case `index` of the seed: its family, body size, cause (the causes in turn, so every cause
-- has its share), the base and new sources and the injected line.
function M.case(seed, index)
  local rng = M.generator(seed * 1000003 + index)
  local cause_name = M.CAUSE_ORDER[(index - 1) % #M.CAUSE_ORDER + 1]
  local cause = M.CAUSES[cause_name]
  local family = M.FAMILY_ORDER[rng.int(1, #M.FAMILY_ORDER)]
  local mix = M.FAMILIES[family]
  local statements = math.floor(rng.uniform(24, 420))
  local body, kinds = {}, {}
  for j = 1, statements do
    local kind = draw_kind(rng, mix)
    kinds[j], body[j] = kind, STATEMENTS[kind](rng)
  end
  local tab_at = rng.int(1, statements)
  kinds[tab_at], body[tab_at] = "tab", STATEMENTS.tab(rng)
  local new_body = {}
  for j, line in ipairs(body) do new_body[j] = line end
  local at, kind
  if cause.insert then
    at = rng.int(1, statements + 1)
    table.insert(new_body, at, cause.insert(rng))
    kind = "added"
  else
    -- a line of the kind the change needs; one is made where the body has none
    local candidates = {}
    for j, k in ipairs(kinds) do if k == cause.kinds[1] then candidates[#candidates + 1] = j end end
    if #candidates == 0 then
      local j = rng.int(1, statements)
      kinds[j], body[j] = cause.kinds[1], STATEMENTS[cause.kinds[1]](rng)
      new_body[j] = body[j]
      candidates = {j}
    end
    at = rng.choice(candidates)
    new_body[at] = cause.change(rng, body[at])
    kind = "changed"
  end
  local id = string.format("%02d-%s", index, cause_name)
  local base_text, first = kernel_source(id, family, body)
  local new_text = kernel_source(id, family, new_body)
  -- sized for about 0.5 ms on an H100 with a wave of 8 blocks of 256 threads an SM
  local iters = math.max(64, math.min(1024, math.floor(60000 / statements)))
  return {id = id, index = index, seed = seed, cause = cause_name, family = family, statements = statements,
    base = base_text, new = new_text, line = first + at - 1, kind = kind, iters = iters, first = first,
    line_text = new_body[at]}
end

-- The cases 1..count of the seed.
function M.cases(seed, count)
  local list = {}
  for index = 1, count do list[index] = M.case(seed, index) end
  return list
end

-- The strengths the measurement tries, weakest first: {inj_mask, inj_wmask, inj_reps, fraction}
-- (fraction: the injected line's executions against once an iteration in every warp), one a
-- fraction, from 1/512 (one iteration in 64, one warp in 8) to 16; steps of at most 1.5x below 1.
M.STRENGTHS = {}
do
  local seen = {}
  local function add(mask, wmask, reps)
    local fraction = reps / ((mask + 1) * (wmask + 1))
    if not seen[fraction] then
      seen[fraction] = true
      M.STRENGTHS[#M.STRENGTHS + 1] = {mask, wmask, reps, fraction}
    end
  end
  for _, reps in ipairs({1, 2, 3}) do
    for _, wmask in ipairs({0, 1, 3, 7}) do
      for _, mask in ipairs({0, 1, 3, 7, 15, 31, 63}) do add(mask, wmask, reps) end
    end
  end
  for _, reps in ipairs({4, 6, 8, 12, 16}) do add(0, 0, reps) end
  table.sort(M.STRENGTHS, function(a, b) return a[4] < b[4] end)
end

-- The strengths a case can take: a changed line runs once where picked (no reps), a barrier is
-- never masked by warp.
function M.strengths(case)
  local list = {}
  for _, s in ipairs(M.STRENGTHS) do
    if not (case.kind == "changed" and s[3] > 1) and not (M.CAUSES[case.cause].uniform and s[2] > 0) then
      list[#list + 1] = s
    end
  end
  return list
end

return M
