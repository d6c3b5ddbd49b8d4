-- Sweeps without a GPU: enumeration, filter, error rows, CSV flushed per row, metadata.
-- covers: lua/gpuexp/engine/failures.lua, lua/gpuexp/engine/client.lua, lua/gpuexp/engine/inline.lua
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")

-- The sweeps below fail points on purpose, and a run with failed points exits 5 saying how many and
-- the first one (its script line), with or without a terminal, supervised and --inline alike. So
-- the body runs in a child gpuexp, as a user's script would, and its exit and stderr are checked.
if arg[1] ~= "--child" then
  local binary, stderr_path = arg[1], T.temporary_directory() .. "/stderr" -- removed whatever happens
  for _, mode in ipairs({"", "--inline"}) do
    local _, _, code = os.execute(string.format("%s --quiet --no-plan %s %s --child 2>%s", binary, mode,
      gpuexp.script, stderr_path))
    local stderr = T.read(stderr_path) or ""
    local how = mode == "" and "supervised" or "inline"
    T.eq(code, 5, how .. ": a run with failed points exits 5; stderr: " .. stderr)
    T.ok(stderr:find("gpuexp: 3 of 9 points failed (3 error)", 1, true), how .. ": the count: " .. stderr)
    T.ok(stderr:find("the first: sweep 'unit' point n=2,mode=slow (error): run returned number, not a row table", 1,
      true), how .. ": the first failure: " .. stderr)
    T.ok(not stderr:find("^ok") and not stderr:find("FAIL"), how .. ": the child's assertions held: " .. stderr)
  end
  -- a run says where its rows went, both ways (a script may print nothing), unless --quiet
  local ws = T.workspace(binary)
  ws.write("quiet.lua", 'gpuexp.sweep{name = "q", axes = {{"n", {1, 2, 3}}}, run = function() return {} end}')
  for _, mode in ipairs({"", "--inline"}) do
    local code, stdout, stderr = ws.run("--arch sm_90 " .. mode .. " -o q.csv quiet.lua")
    T.ok(code == 0 and stdout == "" and stderr:find("gpuexp: wrote 3 rows to q.csv\n", 1, true),
      "a sweep that prints nothing says where its CSV went " .. mode .. ": " .. stderr)
    code, _, stderr = ws.run("--quiet --arch sm_90 " .. mode .. " -o q.csv quiet.lua")
    T.ok(code == 0 and not stderr:find("wrote", 1, true), "--quiet: not said " .. mode .. ": " .. stderr)
  end
  T.done()
  return
end

local points = gpuexp.points({{"a", {1, 2, 3}}, {"b", {"x", "y"}}}, function(p) return not (p.a == 2 and p.b == "y") end)
T.eq(#points, 5, "points after the filter")
T.eq(points[1].a, 1, "first point a"); T.eq(points[1].b, "x", "first point b")
T.eq(points[2].b, "y", "last axis varies fastest")
T.eq(points[4].a, 3, "filtered point skipped")

local work = T.temporary_directory()
local out = work .. "/sweep.csv"
local seen_rows_on_disk = {}
local rows, path, columns = gpuexp.sweep{
  name = "unit", out = out, device = false,
  axes = {{"n", {1, 2, 3, 4}}, {"mode", {"fast", "slow"}}},
  where = function(p) return p.n ~= 4 or p.mode == "fast" end,
  columns = {"square", "label"},
  run = function(p)
    -- every earlier row is already on disk when the next point runs
    local file = io.open(out)
    local text = file:read("a")
    file:close()
    local _, lines = text:gsub("\n", "")
    seen_rows_on_disk[#seen_rows_on_disk + 1] = lines
    if p.n == 3 and p.mode == "slow" then error("point failed on purpose") end
    if p.n == 2 and p.mode == "slow" then return 42 end
    return {square = p.n * p.n, label = p.mode .. ",\"quoted\""}
  end,
}
T.eq(path, out, "path")
T.eq(#rows, 7, "rows")
-- every row but the last one's is in the file when a point starts (the supervisor writes a row as
-- the worker goes on with its next point, which it asked for as the previous one started)
for i, lines in ipairs(seen_rows_on_disk) do
  T.ok(lines == i or lines == i - 1, string.format("lines on disk before point %d: %d", i, lines))
end
T.eq(table.concat(columns, ","), "n,mode,square,label,status,error", "columns")
T.eq(rows[1].status, "ok", "row 1 status")
T.eq(rows[4].status, "error", "non-table result is an error row")
T.ok(rows[4].error:find("run returned number, not a row table", 1, true), "message of a non-table row")
T.eq(rows[6].status, "error", "raising point")
T.ok(rows[6].error:find("test_sweep.lua:%d+: point failed on purpose"), "error message with location: " .. rows[6].error)
T.eq(rows[7].n, 4, "sweep continued after the error")

local back, back_columns = gpuexp.csv.read(out)
T.eq(#back, 7, "rows read back")
T.eq(#back_columns, 6, "columns read back")
T.eq(back[3].square, 4, "number read back")
T.eq(back[1].label, 'fast,"quoted"', "quoted field read back")
T.eq(back[6].status, "error", "error row read back")
T.eq(back[6].square, "", "error row leaves value columns empty")

local meta_file = io.open((out:gsub("%.csv$", "")) .. ".meta.json")
local meta = meta_file:read("a")
meta_file:close()
local info = require("cjson").decode(meta)
T.eq(info.sweep.rows_ok, 5, "meta rows_ok")
T.eq(info.sweep.rows_error, 2, "meta rows_error")
T.eq(info.gpuexp_version, gpuexp.version, "meta version")
T.ok(tostring(info.script_hash):match("^%x+$"), "meta script hash")

-- columns inferred from the first successful row; error rows before it are held, not lost
local out2 = work .. "/inferred.csv"
local rows2, _, columns2 = gpuexp.sweep{
  out = out2, device = false, axes = {{"i", {1, 2}}},
  run = function(p)
    if p.i == 1 then error("first fails") end
    return {zeta = 1, alpha = 2}
  end,
}
T.eq(table.concat(columns2, ","), "i,alpha,zeta,status,error", "inferred columns")
local back2 = gpuexp.csv.read(out2)
T.eq(#back2, 2, "held error row written"); T.eq(back2[1].status, "error", "held row status")
T.eq(#rows2, 2, "rows2")

T.raises(function() gpuexp.sweep{axes = {{"a", {1}}}, run = function() end, colums = {}} end, "unknown option 'colums' (did you mean 'columns'?)")
T.raises(function() gpuexp.sweep{axes = {}, run = function() end} end, "'axes' must be a list")
T.raises(function() gpuexp.sweep{axes = {{"a", {1}}}} end, "'run' must be a function")
T.done()
