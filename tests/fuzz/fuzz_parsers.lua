-- A seeded mutation loop over the Lua parsers that read what others wrote (issue 25): CSV files,
-- the metadata JSON, the samples files, and history databases (foreign or damaged SQLite files).
-- Seeds come from a real run of this binary; each is mutated (bytes flipped, inserted, removed,
-- repeated, cut, tokens that parsers trip on put in) with a fixed seed, for a fixed time per
-- target. A parser may refuse its input with a message; it may not crash the process, hang (the
-- test's TIMEOUT), or fail inside itself (a Lua "attempt to ...", "bad argument ..." error).
-- usage: gpuexp --no-plan fuzz_parsers.lua GPUEXP_BINARY SECONDS_PER_TARGET
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local budget = tonumber(arg[2] or "4")
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local history = require("gpuexp.store.history")
local ws = T.workspace(binary)

-- the seeds: a recorded run with samples
ws.write("seed.lua", [[
gpuexp.sweep{name = "seed", axes = {{"n", {1, 2, 3}}, {"kind", {"a", "b,c", 'q"uote'}}},
  run = function(p) return {median_ms = p.n * 1.5, noise_pct = 0.5, note = "x\ny", times_ms = {1.25, 1.5, p.n}} end}
]])
local code, _, stderr = ws.run("--quiet --arch sm_90 --history h.sqlite -o seed.csv seed.lua")
T.eq(code, 0, "the seed run: " .. stderr)
local seeds = {csv = ws.read("seed.csv"), meta = ws.read("seed.meta.json"), samples = ws.read("seed.samples.csv"),
  history = ws.read("h.sqlite")}
for name, text in pairs(seeds) do T.ok(text and #text > 0, "seed " .. name) end

math.randomseed(25)
local tokens = {",", '"', "\n", "\r\n", "\0", "{", "}", "[", "]", ":", "\\u0000", "\\ud800", "-1e309", "nan", "1e999",
  "null", "true", "\255\254", "\xe2\x82", string.rep("9", 40), string.rep("[", 300), "'", ";", "--"}
local function mutate(text)
  for _ = 1, math.random(1, 4) do
    local n = #text
    local at = math.random(1, math.max(1, n))
    local op = math.random(1, 6)
    if op == 1 and n > 0 then -- flip a byte
      text = text:sub(1, at - 1) .. string.char(math.random(0, 255)) .. text:sub(at + 1)
    elseif op == 2 then -- a token parsers trip on
      text = text:sub(1, at - 1) .. tokens[math.random(#tokens)] .. text:sub(at)
    elseif op == 3 and n > 0 then -- remove a range
      text = text:sub(1, at - 1) .. text:sub(at + math.random(1, 64))
    elseif op == 4 and n > 0 then -- repeat a range
      local piece = text:sub(at, at + math.random(1, 64))
      text = text:sub(1, at - 1) .. piece:rep(math.random(2, 8)) .. text:sub(at)
    elseif op == 5 then -- cut
      text = text:sub(1, at)
    else -- a page of the file overwritten with noise (a damaged database page)
      local noise = {}
      for i = 1, math.random(1, 128) do noise[i] = string.char(math.random(0, 255)) end
      text = text:sub(1, at - 1) .. table.concat(noise) .. text:sub(at + #noise)
    end
  end
  return text
end

-- an error from inside a parser, not a refusal of its input
local function internal(problem)
  local text = type(problem) == "table" and tostring(problem.message) or tostring(problem)
  return text:find("attempt to ") or text:find("bad argument") or text:find("stack overflow") or
    text:find("table index is") or text:find("number has no integer representation") or
    text:find("invalid value %(at index") or text:find("string length overflow")
end

local failures = {}
local function run_target(name, seed, check)
  local started, cases = gpuexp.clock(), 0
  while gpuexp.clock() - started < budget do
    local input = mutate(seed)
    cases = cases + 1
    local ok, problem = pcall(check, input)
    if not ok and internal(problem) and #failures < 5 then
      failures[#failures + 1] = string.format("%s: %s\n  input (%d bytes): %q", name,
        type(problem) == "table" and tostring(problem.message) or tostring(problem), #input, input:sub(1, 400))
    end
  end
  print(string.format("%s: %d inputs in %.1f s", name, cases, gpuexp.clock() - started))
end

local function put(name, text)
  local file = assert(io.open(ws.dir .. "/" .. name, "wb"))
  file:write(text)
  file:close()
  return ws.dir .. "/" .. name
end

-- CSV text, as compare, merge and history record read it
run_target("csv", seeds.csv, function(input)
  local path = put("fuzz.csv", input)
  pcall(csv.parse, input, "fuzz.csv")
  local ok, problem = pcall(csv.read, path)
  if not ok and internal(problem) then error(problem, 0) end
end)
-- the metadata JSON
run_target("meta", seeds.meta, function(input)
  local ok, problem = pcall(json.decode, input)
  if not ok and internal(problem) then error(problem, 0) end
  local path = put("fuzz.meta.json", input)
  local _, unreadable = meta.read_json(path)
  if unreadable and internal(unreadable) then error(unreadable, 0) end
  put("fuzz.csv", seeds.csv)
  local read, why = result.read(ws.dir .. "/fuzz.csv")
  if why and internal(why) then error(why, 0) end
  if read then read:sample_entries() end
end)
-- the samples file beside a CSV
put("fuzz.meta.json", seeds.meta)
run_target("samples", seeds.samples, function(input)
  put("fuzz.csv", seeds.csv)
  put("fuzz.samples.csv", input)
  local read, why = result.read(ws.dir .. "/fuzz.csv")
  if why and internal(why) then error(why, 0) end
  if read then
    local _, damaged = read:sample_entries()
    if damaged and internal(damaged) then error(damaged, 0) end
  end
end)
-- a damaged or foreign history database, opened to read (list, show, export) and to write
run_target("history", seeds.history, function(input)
  local path = put("fuzz.sqlite", input)
  for _, readonly in ipairs({true, false}) do
    local db, why = history.open(path, readonly)
    if why and internal(why) then error(why, 0) end
    if db then
      local ok, problem = pcall(function()
        for _, run in ipairs(db:rows("SELECT id FROM runs")) do
          history.load_run(db, run.id)
          history.export(db, run.id)
        end
      end)
      db:close()
      if not ok and internal(problem) then error(problem, 0) end
    end
  end
end)

T.eq(#failures, 0, "parsers failed inside themselves:\n" .. table.concat(failures, "\n"))
T.done()
