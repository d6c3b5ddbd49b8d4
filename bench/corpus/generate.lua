-- The seeded generator of the corpus of causes (bench/corpus/README.md). From a seed alone it
-- draws, for every family of families.lua, three instances (one at each problem size: S, about
-- 4-20 us; M, 60-300 us; L, 1-4 ms, for the good kernel), their launch shapes and the intensity
-- of each injected cause, sizes them with the family's cost model, and writes one program a
-- instance holding its good kernel and every bad variant. Families that stand for a case of
-- issue 33's "Why" add an instance with that case's parameters ("why" instances, the same for
-- every seed). The same seed gives the same corpus, byte for byte.
--
-- As a module (dofile): M.corpus(seed) -> corpus; M.launch(corpus, point, device) -> the launch.
-- As a script:
--   gpuexp --arch sm_90 bench/corpus/generate.lua SEED [--check] [--json FILE]
-- prints the corpus (families, pairs, sizes, shapes); --check compiles every program offline and
-- checks what each cause needs of the compiler (the bad spill kernel spills and the good does not,
-- the run-time-indexed array is in local memory, the occupancy variants lose occupancy); --json
-- writes the corpus (points and sources) to FILE.
local here = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".")
local families = dofile(here .. "/families.lua")

local M = {}

M.FORMAT = "gpuexp-corpus-1"
-- Seeds: the development ones were used to write and test the generator and the recompute
-- (offline, with synthetic records: generate.lua's points through synthetic.lua); the held-out
-- seed is the one the published table is measured on (collect.sh's default). It was compiled
-- offline (--check) to see that its kernels build, and nothing of it was measured before.
M.DEVELOPMENT_SEEDS = {1, 2, 3}
M.HELD_OUT_SEED = 7919
-- Seeds whose GPU records the judges were since developed on: the held-out seed's H100 records
-- showed the misses that diagnose, the explainer and the regression rule were then fixed for
-- (docs/explanation/error-rates.md), so a table recomputed from them is no longer a held-out
-- measurement; a hidden run takes a seed of its own (collect.sh OUT 1,2 SEED).
M.JUDGES_DEVELOPED_ON = {7919}

M.CLASSES = {{name = "S", low_ms = 0.004, high_ms = 0.02}, {name = "M", low_ms = 0.06, high_ms = 0.3},
  {name = "L", low_ms = 1.0, high_ms = 4.0}}
M.MAX_BAD_MS = 12 -- an instance is shrunk until its slowest bad variant is modelled under this

-- A seeded stream of numbers (xorshift64): the generator's only source of choices.
function M.generator(seed)
  local state = (math.tointeger(seed) or 1) * 2654435761 + 0x5851F42D4C957F2D
  if state == 0 then state = 1 end
  local function step()
    state = state ~ (state << 13); state = state ~ (state >> 7); state = state ~ (state << 17)
    return state
  end
  for _ = 1, 8 do step() end
  local rng = {}
  function rng.float() return ((step() >> 11) & ((1 << 53) - 1)) / 2 ^ 53 end
  function rng.int(low, high) return low + math.floor(rng.float() * (high - low + 1)) end
  function rng.choice(list) return list[rng.int(1, #list)] end
  function rng.uniform(low, high) return low + (high - low) * rng.float() end
  function rng.log_uniform(low, high) return math.exp(rng.uniform(math.log(low), math.log(high))) end
  function rng.shuffle(list)
    for i = #list, 2, -1 do
      local j = rng.int(1, i)
      list[i], list[j] = list[j], list[i]
    end
    return list
  end
  return rng
end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- The modelled time of a variant (the family's cost and a launch's fixed part).
local function modelled_ms(family, params, variant)
  return family.cost(params, variant) + families.OVERHEAD_MS
end

-- Sizes params for a good kernel of about target_ms whose slowest bad variant stays under
-- MAX_BAD_MS: the family's scale from a count of units, found by fixed-point steps on the model.
local function size(family, params, variants, target_ms, class_name)
  local scale = family.scale or families.scale_elements
  local units, max_units = 1, 1 << 22
  if family.units then -- a family sized by its problem size alone
    scale(params, family.units[class_name])
    params.modelled_ms = modelled_ms(family, params, variants[1])
    return
  end
  for _ = 1, 40 do
    scale(params, units)
    local ms = modelled_ms(family, params, variants[1])
    local next_units = math.max(1, math.min(max_units, units * target_ms / ms))
    if math.abs(next_units - units) < 0.01 * units then break end
    units = next_units
  end
  local function slowest()
    local worst = 0
    for i = 2, #variants do worst = math.max(worst, modelled_ms(family, params, variants[i])) end
    return worst
  end
  while units > 1 and slowest() > M.MAX_BAD_MS do
    units = math.max(1, units * 0.8)
    scale(params, units)
  end
  scale(params, units)
  params.modelled_ms = modelled_ms(family, params, variants[1])
end

-- One instance of a family: its params (drawn, sized), its variants as points, its program.
-- why: the issue's case it stands for ({note, cause}: the good point and the bad one of that cause
-- carry the note), or nil.
local function instance(corpus, name, family, number, params, class_name, target_ms, why)
  local variants = family.variants(params)
  size(family, params, variants, target_ms, class_name)
  local program = string.format("%s_%d", name, number)
  local sources = {families.HEADER}
  local good_id
  for _, v in ipairs(variants) do
    local kernel = string.format("%s_%s", program, v.name)
    v.kernel = kernel
    sources[#sources + 1] = family.kernel(params, v, kernel)
    local id = string.format("%s.%d.%s", name, number, v.name)
    good_id = good_id or id
    local variant = copy(v)
    corpus.points[#corpus.points + 1] = {id = id, family = name, instance = number, variant = v.name, cause = v.cause,
      good = v.cause and good_id or nil, program = program, kernel = kernel, size = class_name, shape = params.shape,
      why = why and (not v.cause or v.cause == why.cause) and why.note or nil, params = params, variant_params = variant,
      modelled_ms = modelled_ms(family, params, v)}
  end
  corpus.programs[program] = table.concat(sources, "\n")
  corpus.program_order[#corpus.program_order + 1] = program
end

-- M.corpus(seed) -> {format, seed, points = {...}, programs = {name -> source}, program_order,
-- families}. Each family draws from a stream of its own (seed and family index), so a family
-- added later changes no other family's draws.
function M.corpus(seed)
  local corpus = {format = M.FORMAT, seed = seed, points = {}, programs = {}, program_order = {}, families = families.order}
  for index, name in ipairs(families.order) do
    local family = assert(families.families[name], name)
    local rng = M.generator(seed * 1000003 + index)
    if family.why then
      local params = copy(family.why)
      params.note, params.cause = nil, nil
      params.per_sm = params.per_sm or 8
      instance(corpus, name, family, 0, params, "M", 0.15, family.why)
    end
    local classes = rng.shuffle({1, 2, 3})
    local shapes = rng.shuffle({"exact", "persistent", rng.choice({"exact", "persistent"})})
    local function draw(number)
      local params = family.draw(rng)
      params.shape = params.shape or shapes[number]
      return params
    end
    local first_key, varied = nil, false
    for number = 1, 3 do
      local params = draw(number)
      -- when the first two instances share a launch shape, the third takes another (drawn again
      -- from the same stream)
      for _ = 1, 20 do
        if number < 3 or varied or M.shape_key(params) ~= first_key then break end
        params = draw(number)
      end
      local key = M.shape_key(params)
      first_key = first_key or key
      varied = varied or key ~= first_key
      local class = M.CLASSES[classes[number]]
      instance(corpus, name, family, number, params, class.name, rng.log_uniform(class.low_ms, class.high_ms))
    end
  end
  return corpus
end

-- What tells two launch shapes apart: the grid's style, the block size, the blocks an SM, the waves.
function M.shape_key(params)
  return string.format("%s/%s/%s/%s", tostring(params.shape), tostring(params.block),
    params.shape == "exact" and "-" or tostring(params.per_sm), tostring(params.waves))
end

-- The good point of a bad one, and the pairs (bad, good) of a corpus.
function M.pairs(corpus)
  local by_id, list = {}, {}
  for _, p in ipairs(corpus.points) do by_id[p.id] = p end
  for _, p in ipairs(corpus.points) do
    if p.cause then list[#list + 1] = {bad = p, good = by_id[p.good]} end
  end
  return list
end

-- M.launch(corpus, point, device) -> {grid, block, shared, args (descriptors: {"buffer", name} or
-- {type, value})}: the point's launch on a device ({sm_count, l2_bytes, blocks_per_sm(kernel,
-- block, shared)}).
function M.launch(corpus, point, device)
  local family = families.families[point.family]
  local variant = copy(point.variant_params)
  return family.launch(point.params, variant, device)
end

M.families = families

-- The script: print the corpus; --check compiles it offline; --json writes it.
local function main(args)
  local seed = math.tointeger(tonumber(args[1] or ""))
  if not seed then
    io.stderr:write("usage: gpuexp --arch sm_90 bench/corpus/generate.lua SEED [--check] [--json FILE]\n")
    os.exit(2)
  end
  local check, json_path = false, nil
  local i = 2
  while args[i] do
    if args[i] == "--check" then check = true
    elseif args[i] == "--json" then json_path = args[i + 1]; i = i + 1
    else io.stderr:write("generate.lua: unknown argument " .. args[i] .. "\n"); os.exit(2) end
    i = i + 1
  end
  local corpus = M.corpus(seed)
  local by_family, causes, classes, shapes = {}, {}, {}, {}
  for _, p in ipairs(corpus.points) do
    by_family[p.family] = (by_family[p.family] or 0) + (p.cause and 1 or 0)
    if p.cause then causes[p.cause] = (causes[p.cause] or 0) + 1 end
    classes[p.size] = (classes[p.size] or 0) + 1
    shapes[tostring(p.shape)] = (shapes[tostring(p.shape)] or 0) + 1
  end
  local pairs_list = M.pairs(corpus)
  print(string.format("corpus of seed %d: %d families, %d points, %d (kernel, cause) pairs, %d programs", seed,
    #corpus.families, #corpus.points, #pairs_list, #corpus.program_order))
  for _, p in ipairs(corpus.points) do
    print(string.format("  %-32s %-20s size %s shape %-10s block %-4s modelled %.4f ms%s", p.id, p.cause or "(good)", p.size,
      tostring(p.shape), tostring(p.params.block), p.modelled_ms, p.why and ("  [why: " .. p.why .. "]") or ""))
  end
  local names = {}
  for name in pairs(causes) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do io.write(name, "=", causes[name], " ") end
  print()
  if check then
    local problems = M.check(corpus)
    for _, problem in ipairs(problems) do print("PROBLEM " .. problem) end
    print(#problems == 0 and "check: every program compiles and every cause is where the compiler should put it"
      or string.format("check: %d problem(s)", #problems))
    if #problems > 0 then os.exit(1) end
  end
  if json_path then
    local json = require("gpuexp.store.json")
    local file = assert(io.open(json_path, "w"))
    file:write(json.encode(corpus))
    file:close()
  end
end

-- Compiles every program (offline or on a GPU) and checks what the causes ask of the compiler.
-- Returns the problems found (texts).
function M.check(corpus)
  local problems = {}
  local kernels = {}
  for _, name in ipairs(corpus.program_order) do
    local ok, program = pcall(gpuexp.compile, {source = corpus.programs[name], name = name .. ".cu"})
    if not ok then
      problems[#problems + 1] = name .. ": " .. (type(program) == "table" and program.message or tostring(program))
    else
      kernels[name] = program
    end
  end
  local device = M.offline_device()
  for _, p in ipairs(corpus.points) do
    local program = kernels[p.program]
    if program then
      local kernel = program:kernel(p.kernel)
      local r = kernel:resources()
      p.resources = r
      device.kernels[p.kernel] = kernel
      local launch = M.launch(corpus, p, device)
      local occupancy = kernel:occupancy{block = launch.block, shared = launch.shared or 0}
      p.occupancy_pct = occupancy.occupancy_pct
      local spills = (r.spill_store_bytes or 0) + (r.spill_load_bytes or 0)
      if p.cause == "register_spills" and spills == 0 then problems[#problems + 1] = p.id .. ": no spills" end
      if p.family == "spills" and not p.cause and spills > 0 then problems[#problems + 1] = p.id .. ": the good kernel spills" end
      if p.cause == "local_memory" and (r.stack_frame_bytes or 0) == 0 then problems[#problems + 1] = p.id .. ": no stack frame" end
      if p.family == "local_array" and not p.cause and (r.stack_frame_bytes or 0) > 0 then
        problems[#problems + 1] = p.id .. ": the good kernel has a stack frame"
      end
    end
  end
  for _, pair in ipairs(M.pairs(corpus)) do
    local bad, good = pair.bad, pair.good
    if bad.cause and bad.cause:match("^occupancy_") and bad.occupancy_pct and good.occupancy_pct
      and bad.occupancy_pct >= good.occupancy_pct then
      problems[#problems + 1] = string.format("%s: occupancy %.0f%% is not below the good kernel's %.0f%%", bad.id,
        bad.occupancy_pct, good.occupancy_pct)
    end
  end
  return problems
end

-- The device facts of an offline plan (an H100 SXM's: 132 SMs, 50 MiB of L2), with the
-- occupancy of compiled kernels from the model.
function M.offline_device()
  local device = {sm_count = 132, l2_bytes = 50 * 1024 * 1024, kernels = {}}
  function device.blocks_per_sm(kernel_name, block, shared)
    local kernel = device.kernels[kernel_name]
    if not kernel then return 2048 // block end
    return kernel:occupancy{block = block, shared = shared or 0}.active_blocks_per_sm
  end
  return device
end

if gpuexp and gpuexp.script and gpuexp.script:match("generate%.lua$") then main(arg or gpuexp.args) end

return M
