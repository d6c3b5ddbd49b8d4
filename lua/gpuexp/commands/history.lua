-- gpuexp history [--history PATH] COMMAND: lists, shows, exports, records, excludes and prunes the
-- runs of the history (store/history.lua).
local csv = require("gpuexp.store.csv")
local history = require("gpuexp.store.history")
local catalog = require("gpuexp.catalog")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

local function message_of(problem) return type(problem) == "table" and problem.message or tostring(problem) end

local function fail(code, message)
  io.stderr:write("gpuexp history: " .. message .. "\n")
  return code
end

local function ids_from(args, first)
  local ids = {}
  for i = first, #args do
    local id = tonumber(args[i])
    if not id or math.type(id) ~= "integer" then return nil, "a run is a number (gpuexp history list), got '" .. args[i] .. "'" end
    ids[#ids + 1] = id
  end
  if #ids == 0 then return nil, "which run? (gpuexp history list)" end
  return ids
end

local function list(db, args)
  local experiment, limit = nil, 30
  local i = 1
  while i <= #args do
    if args[i] == "--experiment" then experiment = args[i + 1]; i = i + 2
    elseif args[i] == "--limit" then limit = math.tointeger(tonumber(args[i + 1])); i = i + 2
    else return fail(EXIT.USAGE, "list: unknown argument '" .. args[i] .. "'") end
  end
  if not limit or limit < 1 then return fail(EXIT.USAGE, "--limit takes a whole number of runs >= 1") end
  local rows = db:rows([[SELECT id, started_utc, kind, experiment, sweep, gpu_name, driver_version, rows_ok, rows_failed,
    complete, excluded, git_commit FROM runs WHERE (? IS NULL OR experiment = ?) ORDER BY id DESC LIMIT ?]],
    experiment, experiment, limit)
  local shown = {}
  for i, r in ipairs(rows) do
    shown[i] = {run = r.id, started_utc = r.started_utc, kind = r.kind .. (r.excluded == 1 and " (excluded)" or ""),
      experiment = r.experiment, sweep = r.sweep, gpu = r.gpu_name or "(plan)", driver = r.driver_version or "",
      rows = string.format("%d ok%s", r.rows_ok, r.rows_failed > 0 and (", " .. r.rows_failed .. " failed") or ""),
      complete = r.complete == 1 and "yes" or "no", commit = r.git_commit and r.git_commit:sub(1, 10) or ""}
  end
  if #shown == 0 then print("(no runs recorded)") return 0 end
  csv.print_table(shown, {"run", "started_utc", "kind", "experiment", "sweep", "gpu", "driver", "rows", "complete", "commit"})
  return 0
end

local function show(db, args)
  local ids, why = ids_from(args, 1)
  if not ids then return fail(EXIT.USAGE, why) end
  for _, id in ipairs(ids) do
    local run, problem = history.load_run(db, id)
    if not run then return fail(EXIT.USAGE, problem) end
    local r = run.record
    print(string.format("run %d: %s / %s (%s), %s", id, r.experiment, r.sweep, r.kind, r.started_utc or "?"))
    for _, field in ipairs({"script", "script_hash", "git_commit", "gpuexp_version", "host", "gpu_name", "gpu_uuid",
      "driver_version", "cuda_driver", "sm_clock_max_khz", "throttled_rows", "rows_ok", "rows_failed", "nightly"}) do
      if r[field] ~= nil then print(string.format("  %-16s %s", field, tostring(r[field]))) end
    end
    local rows = {}
    for n, key in ipairs(run.order) do rows[n] = run:row(key) end
    csv.print_table(rows, run.columns)
  end
  return 0
end

local function export(db, args)
  local id, output = nil, nil
  local i = 1
  while i <= #args do
    if args[i] == "-o" or args[i] == "--output" then output = args[i + 1]; i = i + 2
    else id = tonumber(args[i]); i = i + 1 end
  end
  if not id then return fail(EXIT.USAGE, "export: which run? (gpuexp history list)") end
  local text, samples = history.export(db, id)
  if not text then return fail(EXIT.USAGE, samples) end
  -- files through a temporary file and a rename (a full disk is exit 7, never a cut file)
  local ok, problem
  if output then
    ok, problem = pcall(csv.write_file, output, text)
    if ok and samples then ok, problem = pcall(csv.write_file, (output:gsub("%.csv$", "")) .. ".samples.csv", samples) end
  else
    ok, problem = io.stdout:write(text)
    if ok then ok, problem = io.stdout:flush() end
    problem = problem and ("cannot write to the standard output: " .. tostring(problem))
  end
  if not ok then return fail(EXIT.WRITE, message_of(problem)) end
  return 0
end

local function record_files(db, args)
  local kind, paths = "run", {}
  local i = 1
  while i <= #args do
    if args[i] == "--kind" then kind = args[i + 1]; i = i + 2 else paths[#paths + 1] = args[i]; i = i + 1 end
  end
  if kind ~= "run" and kind ~= "nightly" then return fail(EXIT.USAGE, "--kind is run or nightly") end
  if #paths == 0 then return fail(EXIT.USAGE, "record: which CSV files?") end
  for _, path in ipairs(paths) do
    local id, why, again = history.record_file(db, path, {kind = kind})
    if not id then return fail(EXIT.HISTORY, why) end
    print(string.format(again and "%s was recorded already, as run %d (not recorded again)" or "recorded %s as run %d",
      path, id))
  end
  return 0
end

local function set_excluded(db, args, value)
  local ids, why = ids_from(args, 1)
  if not ids then return fail(EXIT.USAGE, why) end
  -- every run checked before any changes; then each says what became of it
  local before = {}
  for _, id in ipairs(ids) do
    local found = db:rows("SELECT excluded, experiment, sweep, started_utc FROM runs WHERE id = ?", id)[1]
    if not found then return fail(EXIT.USAGE, "no run " .. id .. " in the history (nothing changed)") end
    before[id] = found
  end
  for _, id in ipairs(ids) do
    db:run("UPDATE runs SET excluded = ? WHERE id = ?", value, id)
    local run = before[id]
    local what = string.format("run %s (%s, sweep %s, %s)", tostring(id), tostring(run.experiment), tostring(run.sweep),
      tostring(run.started_utc))
    if (run.excluded == 1) == (value == 1) then
      print(string.format("%s: already %s nightly baselines", what, value == 1 and "kept out of" or "in"))
    else
      print(string.format("%s: %s", what, value == 1 and "kept out of nightly baselines from now on" or
        "back in nightly baselines"))
    end
  end
  return 0
end

local function prune(db, args)
  if args[1] == "--run" then
    local ids, why = ids_from(args, 2)
    if not ids then return fail(EXIT.USAGE, why) end
    local deleted, unknown = 0, {}
    local ok, problem = history.transaction(db, function()
      for _, id in ipairs(ids) do
        local changed = db:run("DELETE FROM runs WHERE id = ?", id)
        if changed == 0 then unknown[#unknown + 1] = tostring(id) else deleted = deleted + changed end
      end
    end)
    if not ok then return fail(EXIT.HISTORY, problem) end
    print(string.format("deleted %d run(s)", deleted))
    if #unknown > 0 then return fail(EXIT.USAGE, "no run " .. table.concat(unknown, ", ") .. " in the history") end
    return 0
  end
  local keep = args[1] == "--keep" and tonumber(args[2])
  if not keep or keep < 1 then return fail(EXIT.USAGE, "prune --keep N (N >= 1) or prune --run RUN...") end
  local deleted = 0
  local ok, problem = history.transaction(db, function()
    local victims = db:rows([[SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY experiment, sweep, gpu_name
      ORDER BY id DESC) AS age FROM runs) WHERE age > ?]], keep)
    for _, v in ipairs(victims) do db:run("DELETE FROM runs WHERE id = ?", v.id) end
    deleted = #victims
  end)
  if not ok then return fail(EXIT.HISTORY, problem) end
  print(string.format("deleted %d run(s), kept the newest %d of each experiment, sweep and GPU", deleted, keep))
  return 0
end

-- gpuexp history site DIR [--limit N]: the history as static HTML in DIR.
local function site(db, args)
  local dir, limit = nil, 60
  local i = 1
  while i <= #args do
    if args[i] == "--limit" then limit = math.tointeger(tonumber(args[i + 1])); i = i + 2
    elseif not dir then dir = args[i]; i = i + 1
    else return fail(EXIT.USAGE, "site: unknown argument '" .. args[i] .. "'") end
  end
  if not dir then return fail(EXIT.USAGE, "site: which folder? (gpuexp history site DIR)") end
  if not limit or limit < 2 then return fail(EXIT.USAGE, "--limit takes a whole number of nights >= 2") end
  local pages = require("gpuexp.judge.site")
  local model = pages.model(db, limit)
  for _, page in ipairs(pages.files(model)) do
    local written, problem = pcall(csv.write_printed, dir .. "/" .. page[1], page[2])
    if not written then return fail(EXIT.WRITE, message_of(problem)) end
  end
  print(string.format("wrote %s/index.html: %d series", dir, #model.series))
  return 0
end

-- gpuexp history merge OUT.db IN.db...: another host's runs joined into OUT (made if need be).
local function merge(db, args)
  if #args == 0 then return fail(EXIT.USAGE, "merge: which histories? (gpuexp history merge OUT.db IN.db...)") end
  for _, path in ipairs(args) do
    local added, present = history.merge(db, path)
    if not added then return fail(EXIT.HISTORY, path .. ": " .. tostring(present)) end
    print(string.format("%s: %d run(s) added, %d already there", path, added, present))
  end
  return 0
end

function M.main(args)
  local path
  local rest = {}
  local i = 1
  while i <= #args do
    if args[i] == "--history" then
      path = args[i + 1]
      if not path then return fail(EXIT.USAGE, "--history needs a path") end
      i = i + 2
    else
      rest[#rest + 1] = args[i]; i = i + 1
    end
  end
  local command = table.remove(rest, 1)
  if not command or command == "-h" or command == "--help" or command == "help" then io.write(catalog.help("history")) return command and 0 or 2 end
  if command == "merge" then -- the first path is the history merged into
    path = table.remove(rest, 1)
    if not path then return fail(EXIT.USAGE, "merge: which history to merge into? (gpuexp history merge OUT.db IN.db...)") end
  end
  local commands = {list = list, show = show, export = export, record = record_files, prune = prune, merge = merge,
    site = site,
    exclude = function(db, a) return set_excluded(db, a, 1) end, include = function(db, a) return set_excluded(db, a, 0) end}
  if not commands[command] then return fail(EXIT.USAGE, "unknown command '" .. command .. "' (gpuexp history --help)") end
  path = path or history.default_path()
  local reading = command == "list" or command == "show" or command == "export" or command == "site"
  local db, why = history.open(path, reading)
  if not db then return fail(EXIT.HISTORY, why) end
  local ok, code = pcall(commands[command], db, rest)
  db:close()
  if not ok then return fail(EXIT.HISTORY, message_of(code)) end
  return code
end

return M
