-- The two transports of the ledger service (engine/service.lua) give the same run: each script
-- runs supervised (worker processes) and --inline (one process) from the same starting files, and
-- everything but timing must match: the exit code, stdout, stderr (tracebacks apart: they name
-- the transport's frames), every file written (the CSV, the samples file, the metadata less its
-- times, and the runs a history recorded).
-- covers: lua/gpuexp/engine/run.lua, lua/gpuexp/engine/inline.lua, lua/gpuexp/engine/client.lua, lua/gpuexp/engine/supervisor.lua, lua/gpuexp/engine/failures.lua, lua/gpuexp/commands/run.lua
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local cjson = require("cjson")
local binary = assert(arg[1], "the gpuexp binary is the first argument")

local function shell_quote(text) return "'" .. text:gsub("'", "'\\''") .. "'" end

local read, write = T.read, T.write

-- Every file under dir, by relative path, sorted.
local function files_under(dir)
  local listing = io.popen("cd " .. shell_quote(dir) .. " && find . -type f | sort")
  local list = {}
  for line in listing:lines() do list[#list + 1] = line:sub(3) end
  listing:close()
  return list
end

-- A value as canonical text (keys sorted), less the keys that are times or the command line.
local DROPPED = {time_utc = true, started_utc = true, finished_utc = true, command = true}
local function canonical(value)
  if type(value) ~= "table" then return cjson.encode(value) end
  local keys = {}
  for key in pairs(value) do if not DROPPED[key] then keys[#keys + 1] = key end end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, key in ipairs(keys) do parts[#parts + 1] = tostring(key) .. "=" .. canonical(value[key]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- stderr less tracebacks (their frames name the transport's functions) and progress lines
local function messages(text)
  local kept, in_traceback = {}, false
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line == "stack traceback:" then in_traceback = true
    elseif in_traceback and line:sub(1, 1) == "\t" then -- a frame
    else
      in_traceback = false
      if not line:find("\r", 1, true) and line ~= "" then kept[#kept + 1] = line end
    end
  end
  return table.concat(kept, "\n")
end

-- Runs one case in a fresh folder: its files written, prepare (shell, run there first), then
-- gpuexp --arch sm_90 MODE ARGS. Returns what the run left: code, stdout, stderr, files.
local function run_case(case, mode)
  local dir = T.temporary_directory()
  for name, text in pairs(case.files) do write(dir .. "/" .. name, text) end
  if case.prepare then
    local ok = os.execute(string.format("cd %s && GPUEXP=%s && { %s; } >/dev/null 2>&1", shell_quote(dir),
      shell_quote(binary), case.prepare))
    T.ok(ok, case.name .. ": its preparation ran")
  end
  local output = T.temporary_directory()
  local _, _, code = os.execute(string.format("cd %s && %s %s --arch sm_90 %s %s > %s/stdout 2> %s/stderr",
    shell_quote(dir), case.environment or "", shell_quote(binary), mode, case.arguments, output, output))
  local result = {code = code, stdout = read(output .. "/stdout"), stderr = messages(read(output .. "/stderr")),
    files = {}}
  for _, name in ipairs(files_under(dir)) do
    local text = read(dir .. "/" .. name)
    if name:match("%.meta%.json$") then
      local meta = cjson.decode(text)
      result.timeout_s = result.timeout_s or meta.sweep.timeout_s or false
      meta.sweep.timeout_s = nil -- said apart below: inline runs have no point limit
      text = canonical(meta)
    elseif name:match("%.db$") then -- a history: the runs it recorded, as exported
      local runs = {}
      for id = 1, 4 do
        local export = io.popen(string.format("cd %s && %s history --history %s export %d 2>&1", shell_quote(dir),
          shell_quote(binary), name, id))
        runs[#runs + 1] = export:read("a")
        export:close()
      end
      text = table.concat(runs, "\n--\n")
    end
    text = text:gsub(dir:gsub("%p", "%%%0"), "DIR")
    result.files[name] = text:gsub(dir:gsub("/", "\\/"):gsub("%p", "%%%0"), "DIR") -- as JSON writes it
  end
  result.names = table.concat(files_under(dir), " ")
  return result
end

local cases = {
  {name = "a plain sweep with samples", arguments = "plain.lua", code = 0, files = {["plain.lua"] = [[
gpuexp.sweep{name = "plain", out = "plain.csv", axes = {{"i", {1, 2, 3}}, {"t", {"a", "b,c"}}},
  run = function(p) return {sq = p.i * p.i, label = p.t .. "!", median_ms = {1.5, 2.5, p.i}} end}
]]}},
  {name = "two sweeps in one script", arguments = "two.lua", code = 0, files = {["two.lua"] = [[
local rows = gpuexp.sweep{name = "one", axes = {{"i", {1, 2}}}, run = function(p) return {v = p.i} end}
gpuexp.sweep{name = "two", axes = {{"i", {1, 2}}}, run = function(p) return {w = p.i + #rows} end}
print("rows of one: " .. #rows .. ", the last " .. rows[2].v)
]]}},
  {name = "points that raise", arguments = "raise.lua", code = 5, files = {["raise.lua"] = [[
gpuexp.sweep{name = "r", out = "r.csv", axes = {{"i", {1, 2, 3, 4}}},
  run = function(p) if p.i % 2 == 0 then error("bad point " .. p.i) end return {v = p.i} end}
]]}},
  {name = "a failing setup", arguments = "setup.lua", code = 1, files = {["setup.lua"] = [[
gpuexp.sweep{name = "s", out = "s.csv", axes = {{"i", {1, 2, 3}}}, setup = function() error("no setup") end,
  run = function(p) return {v = p.i} end}
]]}},
  {name = "an unwritable history", arguments = "--history afile/h.db two.lua", code = 6, prepare = "touch afile",
    files = {["two.lua"] = [[
gpuexp.sweep{name = "one", axes = {{"i", {1, 2}}}, run = function(p) return {v = p.i} end}
gpuexp.sweep{name = "two", axes = {{"i", {1, 2}}}, run = function(p) return {w = p.i} end}
]]}},
  {name = "a history", arguments = "--history h.db raise.lua", code = 5, files = {["raise.lua"] = [[
gpuexp.sweep{name = "r", out = "r.csv", axes = {{"i", {1, 2, 3}}},
  run = function(p) if p.i == 2 then error("bad point") end return {v = p.i, times = {1, 2}} end}
gpuexp.sweep{name = "q", out = "q.csv", axes = {{"i", {1, 2}}}, run = function(p) return {v = p.i} end}
]]}},
  {name = "--only with an unknown axis", arguments = "--only j=1 plain.lua", code = 2, files = {["plain.lua"] = [[
gpuexp.sweep{name = "plain", out = "plain.csv", axes = {{"i", {1, 2, 3}}}, run = function(p) return {v = p.i} end}
]]}},
  {name = "--only and --shard", arguments = "--only 'i=1;i=3;i=4' --shard 1/2 plain.lua", code = 0,
    files = {["plain.lua"] = [[
gpuexp.sweep{name = "plain", out = "plain.csv", axes = {{"i", {1, 2, 3, 4}}}, run = function(p) return {v = p.i} end}
]]}},
  {name = "a Slurm job array's task", arguments = "plain.lua", code = 0,
    environment = "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2", files = {["plain.lua"] = [[
gpuexp.sweep{name = "plain", out = "plain.csv", axes = {{"i", {1, 2, 3, 4}}}, run = function(p) return {v = p.i} end}
]]}},
  {name = "a script that fails after its sweep", arguments = "--history h.db late.lua", code = 1,
    files = {["late.lua"] = [[
gpuexp.sweep{name = "r", out = "r.csv", axes = {{"i", {1, 2}}},
  run = function(p) if p.i == 2 then error("bad point") end return {v = p.i} end}
error("after the sweep")
]]}},
  {name = "a bad --point-timeout", arguments = "--point-timeout soon plain.lua", code = 2, stderr_differs = true,
    files = {["plain.lua"] = [[
gpuexp.sweep{name = "plain", out = "plain.csv", axes = {{"i", {1, 2}}}, run = function(p) return {v = p.i} end}
]]}},
  {name = "--resume of a cut CSV", arguments = "--resume cut.lua", code = 0,
    prepare = "$GPUEXP --arch sm_90 cut.lua && head -c -4 cut.csv > c && mv c cut.csv", files = {["cut.lua"] = [[
gpuexp.sweep{name = "cut", out = "cut.csv", axes = {{"i", {1, 2, 3, 4}}}, run = function(p) return {v = p.i * 10} end}
]]}},
  {name = "a point that adds a column", arguments = "grow.lua", code = 0, files = {["grow.lua"] = [[
gpuexp.sweep{name = "grow", out = "grow.csv", axes = {{"i", {1, 2, 3}}}, columns = {"v"},
  run = function(p) if p.i == 2 then return {v = p.i, extra = "x"} end return {v = p.i} end}
]]}},
  {name = "expect_failures", arguments = "expect.lua", code = 0, files = {["expect.lua"] = [[
local rows = gpuexp.sweep{name = "e", out = "e.csv", expect_failures = true, axes = {{"i", {1, 2, 3}}},
  run = function(p) if p.i == 2 then error("cannot launch") end return {v = p.i} end}
print(rows[2].status, rows[2].error)
]]}},
}

for _, case in ipairs(cases) do
  local supervised, inline = run_case(case, ""), run_case(case, "--inline")
  local what = case.name .. ": "
  T.eq(supervised.code, case.code, what .. "supervised exit code (" .. supervised.stderr .. ")")
  T.eq(inline.code, case.code, what .. "inline exit code (" .. inline.stderr .. ")")
  T.eq(inline.stdout, supervised.stdout, what .. "stdout")
  if not case.stderr_differs then T.eq(inline.stderr, supervised.stderr, what .. "stderr") end
  T.eq(inline.names, supervised.names, what .. "the files written")
  for name, text in pairs(supervised.files) do
    T.eq(inline.files[name], text, what .. name)
  end
  -- the one difference: a supervised run's points have a limit (the default 300 s), an inline
  -- run's none (nothing there could end a point)
  if supervised.timeout_s ~= nil then
    T.eq(supervised.timeout_s, 300, what .. "the supervised point limit")
    T.eq(inline.timeout_s, false, what .. "no point limit inline")
  end
end

T.done()
