-- The corpus of causes (bench/corpus/) without a GPU: the generator is seeded, covers what issue
-- 33 asks (14+ cause families, 60+ pairs, three sizes and two launch shapes a family, the cases of
-- its "Why"), and the held-out seed's kernels compile with each cause where the compiler should
-- put it; then the whole pipeline in the dry mode (collect.lua in an offline plan, synthetic
-- measurements) through recompute.lua: the judges replayed on known answers, the table written
-- and checked, damaged records and synthetic ones refused.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local bench = gpuexp.realpath and gpuexp.realpath(gpuexp.script_dir .. "/../../bench/corpus")
  or (gpuexp.script_dir .. "/../../bench/corpus")
local generate = dofile(bench .. "/generate.lua")
local grid = dofile(bench .. "/grid.lua")
local J = dofile(bench .. "/judges.lua")
local ws = T.workspace(binary)

-- a canonical text of a value (keys sorted), to compare corpora
local function canonical(value)
  if type(value) ~= "table" then return tostring(value) end
  local keys = {}
  for k in pairs(value) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. canonical(value[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

---------------------------------------------------------------------------------------------------
-- the generator

local held_out = generate.corpus(generate.HELD_OUT_SEED)
T.eq(canonical(generate.corpus(generate.HELD_OUT_SEED)), canonical(held_out), "the same seed gives the same corpus")
T.ok(canonical(generate.corpus(2)) ~= canonical(held_out), "another seed, another corpus")
for _, seed in ipairs(generate.DEVELOPMENT_SEEDS) do
  T.ok(seed ~= generate.HELD_OUT_SEED, "the held-out seed is no development seed")
end

local function coverage(corpus)
  local families, sizes, shapes, causes, good = {}, {}, {}, {}, 0
  for _, p in ipairs(corpus.points) do
    sizes[p.family] = sizes[p.family] or {}
    sizes[p.family][p.size] = true
    shapes[p.family] = shapes[p.family] or {}
    shapes[p.family][generate.shape_key(p.params)] = true
    if p.cause then families[p.family] = true; causes[p.cause] = true else good = good + 1 end
  end
  local function count(t) local n = 0 for _ in pairs(t) do n = n + 1 end return n end
  return {families = count(families), causes = causes, good = good, sizes = sizes, shapes = shapes, count = count}
end
for _, seed in ipairs({generate.HELD_OUT_SEED, 1, 2, 3, 12345}) do
  local corpus = generate.corpus(seed)
  local c = coverage(corpus)
  local pairs_list = generate.pairs(corpus)
  T.ok(c.families >= 14, string.format("seed %d: %d cause families (>= 14)", seed, c.families))
  T.ok(#pairs_list >= 60, string.format("seed %d: %d (kernel, cause) pairs (>= 60)", seed, #pairs_list))
  for family, s in pairs(c.sizes) do
    T.ok(s.S and s.M and s.L, string.format("seed %d: %s has the three problem sizes", seed, family))
    T.ok(c.count(c.shapes[family]) >= 2, string.format("seed %d: %s has two launch shapes or more", seed, family))
  end
  for _, pair in ipairs(pairs_list) do
    T.ok(pair.good and pair.good.family == pair.bad.family and not pair.good.cause, "a bad kernel's pair is its good one")
    T.ok(pair.bad.modelled_ms <= generate.MAX_BAD_MS + 0.01, pair.bad.id .. " is modelled under the cap")
  end
end
-- every cause the corpus injects is one the adapter can recognise in an explanation
for cause in pairs(coverage(held_out).causes) do
  T.ok(J.EXPLAINED[cause], "judges.lua knows how an explanation names " .. cause)
end
-- the cases of the issue's "Why", one instance each, and the creep in the grid
local why = {}
for _, p in ipairs(held_out.points) do if p.why and p.cause then why[p.cause] = p end end
for _, cause in ipairs({"uncoalesced_loads", "atomic_contention", "fp64", "local_memory", "too_few_blocks", "barrier_stalls"}) do
  T.ok(why[cause], "a Why instance injects " .. cause)
end
T.eq(why.local_memory.params.size * 4, 64, "the run-time indexed array is 64 bytes")
local device = generate.offline_device()
local few = generate.launch(held_out, why.too_few_blocks, device)
local good_few = generate.launch(held_out, (function()
  for _, p in ipairs(held_out.points) do if p.id == why.too_few_blocks.good then return p end end
end)(), device)
T.eq(good_few.grid, 1056, "the good launch is 1056 blocks on 132 SMs")
T.eq(few.grid, 66, "the same work in 66 blocks")
T.eq(few.block, 256, "of 256 threads")
T.eq(grid.CREEP_PCT, 0.8, "the creep is +0.8% a night")
T.eq(table.concat(grid.DURATIONS_MS, ","), "0.002,0.02,0.2,2.0", "the grid's durations")
T.eq(table.concat(grid.EFFECTS_PCT, ","), "0,0.5,1,2,5", "the grid's effects, and A/A")

-- the adapter's reading of texts
T.eq(J.explained_as("sectors per global load 4 -> 32 (coalescing)", "uncoalesced_loads"), "right", "a coalescing finding")
T.eq(J.explained_as("DRAM bytes +188.7%", "local_memory"), "wrong", "the Why's partial answer for local memory is wrong")
T.eq(J.explained_as("nothing the counters see accounts for +88.0%", "fp64"), "none", "naming nothing")
T.eq(J.explained_as("counters unchanged (13 compared): the time moved +53.6% alone", "invisible"), "right",
  "the sleep is right when nothing moved")
local count, floor = J.evidence_count({verdict = "uncoalesced global loads"},
  {["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 12, ["smsp__inst_executed.sum"] = 1e7})
T.eq(count, 12, "the loads a coalescing verdict rests on")
T.ok(count < floor, "12 loads in 10 million instructions are too few")
T.eq(J.evidence_count({verdict = "compute-bound"}, {}), nil, "a throughput verdict rests on no count")
T.eq(J.price({price = {speedup = 1.8, low = 1.4, high = 2.2}}).low, 1.4, "a price tag with its interval")
T.eq(J.price({verdict = "memory-bound"}), nil, "no price tag")

---------------------------------------------------------------------------------------------------
-- the held-out corpus compiles offline, each cause where the compiler should put it

local code, out, err = ws.run(string.format("--quiet --arch sm_90 %s/generate.lua %d --check", bench, generate.HELD_OUT_SEED))
T.eq(code, 0, "generate.lua --check of the held-out seed: " .. err .. out:sub(-600))
T.ok(out:find("check: every program compiles", 1, true), "the check says so")

---------------------------------------------------------------------------------------------------
-- the dry pipeline: a development seed, three corpus nights, nine grid nights, ab, tune

local records = ws.dir .. "/records"
gpuexp.mkdir(records)
local function collect(args)
  local c, o, e = ws.run("--quiet --inline --arch sm_90 " .. bench .. "/collect.lua " .. args)
  T.eq(c, 0, "collect.lua " .. args .. ": " .. e .. o)
end
collect("tag")
for night = 1, 3 do collect(string.format("corpus 2 %d %s/corpus-night-%d.jsonl", night, records, night)) end
local calibration = records .. "/grid-calibration.json"
for night = 1, 9 do collect(string.format("grid %d %s/grid-night-%02d.jsonl %s", night, records, night, calibration)) end
collect(string.format("ab %s/ab.jsonl %s 2", records, calibration))
collect(string.format("tune brute %s/tune-brute.jsonl", records))
collect(string.format("tune truth %s/tune-truth.jsonl", records))
T.ok(not T.read(records .. "/corpus-night-1.jsonl.partial"), "a night that ended has no .partial file")
T.eq(os.execute(string.format("gzip -9 '%s/corpus-night-1.jsonl'", records)), true, "night 1 gzipped (read through gzip)")

local function recompute(extra)
  return ws.run(string.format("--quiet --no-plan --inline %s/recompute.lua %s --resamples 4 --tune-seeds 2 %s", bench, records,
    extra or ""))
end
code, out, err = recompute("--allow-synthetic")
T.eq(code, 0, "recompute on the dry records: " .. err)
T.ok(out:find("SYNTHETIC RECORDS", 1, true), "the table says its records are synthetic")
T.ok(out:find("corpus seed 2 %(a development seed%)"), "and which seed, a development one: " .. out:sub(1, 300))
for _, row in ipairs({"| explainer | first cause right", "| explainer | a wrong cause named first",
  "| explainer | a counter named on a no-change night", "| diagnose | top-1 verdict right",
  "| diagnose | verdicts from counts under", "| price tag | Spearman", "| price tag | 80% interval",
  "| compare | A/A false calls", "| nightly | A/A false calls", "| ab | A/A false calls", "| tune | tie set"}) do
  T.ok(out:find(row, 1, true), "the table has the row " .. row)
end
-- known answers: synthetic counters that say the cause outright, and a grid whose noise is far
-- under the rule's 2% floor
local named, of = out:match("| uncoalesced_loads | (%d+)/(%d+) | 0 | 0 |")
T.ok(named and named == of and tonumber(of) >= 3, "the explainer names every gathered load: " ..
  (out:match("| uncoalesced_loads[^\n]*") or "(no row)"))
T.ok(out:find("| compare | A/A false calls by duration (every ordered pair of nights) | 2us 0/144, 20us 0/144, 200us 0/144, " ..
  "2ms 0/144", 1, true), "no compare A/A false call: " .. (out:match("| compare | A/A[^\n]*") or ""))
T.ok(out:find("| fma | 2ms | 5%% | [^|]+ | 72/72 |"), "compare finds every 5% slowdown of the 2 ms kernel")
T.ok(out:find("| nightly | A/A false calls by duration (its rule, no re-measure) | 2us 0/80, 20us 0/80", 1, true),
  "no nightly A/A false call over nights 2-9: " .. (out:match("| nightly | A/A[^\n]*") or ""))
T.ok(out:find("creep%) | %+2%.%d%% by night 9 | slower on night 9 |"), "the creep is caught on night 9 at +2.4%: " ..
  (out:match("| a creep[^\n]*") or ""))
T.ok(out:find("| atomic_contention | %d+/%d+ |"), "diagnose is judged on the contended atomics")
T.ok(out:find("pairs slower by >= 5%% | %d+/%d+ = "), "the explainer's rate")

-- the table written into a page and checked against the records; a changed figure is caught
local doc = ws.write("page.md", "# page\n\n<!-- error-rate table: begin -->\nold\n<!-- error-rate table: end -->\n\nafter\n")
code, _, err = recompute("--allow-synthetic --write " .. doc)
T.eq(code, 0, "--write: " .. err)
local written = T.read(doc)
T.ok(written:find("\nafter\n", 1, true) and written:find("^# page"), "the page around the block is kept")
T.ok(written:find("| explainer | first cause right", 1, true), "the table is in the page")
code, _, err = recompute("--allow-synthetic --check " .. doc)
T.eq(code, 0, "--check of the page just written: " .. err)
local tampered = written:gsub("(| compare | A/A false calls by duration %(every ordered pair of nights%) | 2us )0/144", "%11/144")
T.ok(tampered ~= written, "a figure of the page changed")
T.write(doc, tampered)
code, _, err = recompute("--allow-synthetic --check " .. doc)
T.eq(code, 1, "--check fails on a page whose table the records do not give")
T.ok(err:find("is not the one the records give", 1, true), "and says so: " .. err)
code, _, err = recompute("--check " .. doc)
T.eq(code, 2, "no table is checked or written from synthetic records without --allow-synthetic")
T.ok(err:find("synthetic", 1, true), err)

-- a damaged record: named by file and line, exit 2; no temporary folder left behind
local night2 = T.read(records .. "/grid-night-02.jsonl")
local lines = {}
for line in night2:gmatch("[^\n]+") do lines[#lines + 1] = line end
lines[3] = lines[3]:sub(1, 40)
T.write(records .. "/grid-night-02.jsonl", table.concat(lines, "\n") .. "\n")
code, _, err = recompute("--allow-synthetic")
T.eq(code, 2, "a damaged record is bad input (exit 2)")
T.ok(err:find("grid%-night%-02%.jsonl:3: not a JSON record"), "named by file and line: " .. err)

T.done()
