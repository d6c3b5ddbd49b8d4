-- gpuexp history [--history PATH] COMMAND: lists, shows, exports, records, excludes and prunes the
-- runs of the history (store/history.lua).
local csv = require("gpuexp.store.csv")
local text = require("gpuexp.store.text")
local history = require("gpuexp.store.history")
local result = require("gpuexp.store.result")
local samples_file = require("gpuexp.store.samples")
local verdict = require("gpuexp.judge.verdict")
local options = require("gpuexp.engine.options")
local catalog = require("gpuexp.catalog")
local parse_args = require("gpuexp.engine.args")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

local function message_of(problem) return type(problem) == "table" and problem.message or tostring(problem) end

local function fail(code, message)
  io.stderr:write("gpuexp history: " .. text.message(message) .. "\n")
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

local function list(db, o)
  local experiment, limit = o.experiment, o.limit
  if o.positional[1] then return fail(EXIT.USAGE, "list: unknown argument '" .. o.positional[1] .. "'") end
  local rows = db:rows([[SELECT id, started_utc, kind, experiment, sweep, gpu_name, driver_version, rows_ok, rows_failed,
    complete, excluded, git_commit, CASE WHEN gpu_name IS NULL THEN meta END AS meta FROM runs WHERE (? IS NULL OR experiment = ?) ORDER BY id DESC LIMIT ?]],
    experiment, experiment, limit)
  -- each nightly run's regression states, as its night judged them (one replay per series)
  local states, replayed = {}, {}
  for _, r in ipairs(rows) do
    if r.kind == "nightly" and r.excluded == 0 and not states[r.id] then
      local newest = db:rows([[SELECT max(id) AS id FROM runs WHERE experiment = ? AND sweep = ? AND gpu_name IS ? AND
        driver_version IS ? AND kind = 'nightly' AND excluded = 0]], r.experiment, r.sweep, r.gpu_name, r.driver_version)[1]
      if newest and newest.id and not replayed[newest.id] then
        replayed[newest.id] = true
        local _, nights = verdict.replay(db, newest.id, true)
        for _, night in ipairs(nights) do states[night.id] = verdict.states_summary(night.comparison) end
      end
    end
  end
  local shown = {}
  for i, r in ipairs(rows) do
    shown[i] = {run = r.id, started_utc = r.started_utc, kind = r.kind .. (r.excluded == 1 and " (excluded)" or ""),
      experiment = r.experiment, sweep = r.sweep, gpu = history.machine_of(r) or "?", driver = r.driver_version or "",
      rows = string.format("%d ok%s", r.rows_ok, r.rows_failed > 0 and (", " .. r.rows_failed .. " failed") or ""),
      complete = r.complete == 1 and "yes" or "no", commit = r.git_commit and r.git_commit:sub(1, 10) or "",
      regressions = states[r.id] or ""}
  end
  if #shown == 0 then print("(no runs recorded)") return 0 end
  csv.print_table(shown, {"run", "started_utc", "kind", "experiment", "sweep", "gpu", "driver", "rows", "complete", "commit",
    "regressions"})
  return 0
end

local function show(db, args)
  local ids, why = ids_from(args, 1)
  if not ids then return fail(EXIT.USAGE, why) end
  for _, id in ipairs(ids) do
    local run, problem = history.load_run(db, id)
    if not run then return fail(EXIT.USAGE, problem) end
    local r = run.record
    print(text.format("run %d: %s / %s (%s), %s", id, r.experiment, r.sweep, r.kind, r.started_utc or "?"))
    local shown = setmetatable({gpu_name = history.machine_of(r)}, {__index = r})
    for _, field in ipairs({"script", "script_hash", "git_commit", "gpuexp_version", "host", "gpu_name", "gpu_uuid",
      "driver_version", "cuda_driver", "sm_clock_max_khz", "throttled_rows", "rows_ok", "rows_failed", "nightly"}) do
      if shown[field] ~= nil then print(text.format("  %-16s %s", field, tostring(shown[field]))) end
    end
    local rows = {}
    for n, key in ipairs(run.order) do rows[n] = run:row(key) end
    csv.print_table(rows, run.columns)
    -- the acceptances made at this run, with their notes
    for _, a in ipairs(history.acceptances(db, {id})) do
      print(string.format("  accepted %s on %s%s", a.key and run:describe(a.key) or "every point", a.accepted_utc,
        a.note and (": " .. a.note) or ""))
    end
    -- a night's regression states, as the nightly judged it
    local night = r.kind == "nightly" and r.excluded == 0 and verdict.night(db, id)
    for _, e in ipairs(night and night.comparison.points or {}) do
      if e.state then print(text.format("  %s: %s", e.point, e.state.text)) end
    end
  end
  return 0
end

local function export(db, o)
  local id, output = tonumber(o.positional[#o.positional]), o.output
  if not id then return fail(EXIT.USAGE, "export: which run? (gpuexp history list)") end
  local text, samples = history.export(db, id)
  if not text then return fail(EXIT.USAGE, samples) end
  -- files through a temporary file and a rename (a full disk is exit 7, never a cut file)
  local ok, problem
  if output then
    ok, problem = pcall(csv.write_file, output, text, true)
    -- the samples beside a .csv only: never a name made up beside a device (-o /dev/null)
    if ok and samples and output:match("[^/]%.csv$") then
      ok, problem = pcall(csv.write_file, samples_file.path_for(output), samples)
    elseif ok and samples then
      io.stderr:write("gpuexp history: " .. output .. " does not end in .csv: the samples were not written\n")
    end
  else
    ok, problem = io.stdout:write(text)
    if ok then ok, problem = io.stdout:flush() end
    problem = problem and ("cannot write to the standard output: " .. tostring(problem))
  end
  if not ok then return fail(EXIT.WRITE, message_of(problem)) end
  return 0
end

local function record_files(db, o)
  local kind, paths = o.kind, o.positional
  if #paths == 0 then return fail(EXIT.USAGE, "record: which CSV files?") end
  for _, path in ipairs(paths) do
    local id, why, again = history.record_file(db, path, {kind = kind})
    if not id then return fail(EXIT.HISTORY, why) end
    print(text.format(again and "%s was recorded already, as run %d (not recorded again)" or "recorded %s as run %d",
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
      print(text.format("%s: already %s nightly baselines", what, value == 1 and "kept out of" or "in"))
    else
      print(text.format("%s: %s", what, value == 1 and "kept out of nightly baselines from now on" or
        "back in nightly baselines"))
    end
  end
  return 0
end

local function prune(db, o)
  if o.runs and o.keep then return fail(EXIT.USAGE, "prune --keep N or prune --run RUN..., not both") end
  if o.runs then
    local ids, why = ids_from(o.positional, 1)
    if not ids then return fail(EXIT.USAGE, why) end
    local deleted, unknown = 0, {}
    local ok, problem = history.transaction(db, function()
      for _, id in ipairs(ids) do
        local changed = db:run("DELETE FROM runs WHERE id = ?", id)
        if changed == 0 then unknown[#unknown + 1] = tostring(id) else deleted = deleted + changed end
      end
    end)
    if not ok then return fail(EXIT.HISTORY, problem) end
    print(text.format("deleted %d run(s)", deleted))
    if #unknown > 0 then return fail(EXIT.USAGE, "no run " .. table.concat(unknown, ", ") .. " in the history") end
    return 0
  end
  local keep = o.keep
  if not keep or o.positional[1] then return fail(EXIT.USAGE, "prune --keep N (N >= 1) or prune --run RUN...") end
  local deleted = 0
  local ok, problem = history.transaction(db, function()
    -- counted by kind too: ad-hoc runs of an experiment never push its nightly runs (the baselines)
    -- out; a night's re-measure (confirm) goes with its night
    local victims = db:rows([[SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY experiment, sweep, gpu_name,
      kind ORDER BY id DESC) AS age FROM runs WHERE kind != 'confirm') WHERE age > ?]], keep)
    for _, v in ipairs(victims) do deleted = deleted + db:run("DELETE FROM runs WHERE id = ?", v.id) end
    deleted = deleted + db:run([[DELETE FROM runs WHERE kind = 'confirm' AND nightly IS NOT NULL AND NOT EXISTS
      (SELECT 1 FROM runs AS night WHERE night.kind = 'nightly' AND night.nightly = runs.nightly AND
      night.experiment = runs.experiment AND night.sweep = runs.sweep)]])
  end)
  if not ok then return fail(EXIT.HISTORY, problem) end
  print(text.format("deleted %d run(s), kept the newest %d of each experiment, sweep, GPU and kind (a night's " ..
    "re-measures with their night)", deleted, keep))
  return 0
end

-- The keys of a run's points named by --point 'A=V,B=W' (as --only takes it; several with ';'), or
-- nil and why.
local function keys_of(db, id, text)
  local run = history.load_run(db, id)
  if not run then return nil, "no run " .. id .. " in the history" end
  local clauses, why = options.parse_only(text)
  if not clauses then return nil, why end
  local keys = {}
  for _, clause in ipairs(clauses) do
    for name in pairs(clause) do
      local known = false
      for _, axis in ipairs(run.axes) do known = known or axis == name end
      if not known then return nil, string.format("run %d has no axis '%s' (its axes: %s)", id, name,
        table.concat(run.axes, ", ")) end
    end
    -- each clause names one point: one that matches several ('n=1' of axes case and n, or
    -- 'case=b;n=1' meant as 'case=b,n=1') would accept points nobody named
    local found = {}
    for _, key in ipairs(run.order) do
      local cells, matches = result.split(key), true
      for a, axis in ipairs(run.axes) do
        if clause[axis] ~= nil and clause[axis] ~= cells[a] then matches = false end
      end
      if matches then found[#found + 1] = key end
    end
    local named = {}
    for _, axis in ipairs(run.axes) do
      if clause[axis] ~= nil then named[#named + 1] = axis .. "=" .. clause[axis] end
    end
    named = table.concat(named, ",")
    if #found == 0 then return nil, string.format("run %d has no point %s", id, named) end
    if #found > 1 then
      local shown = {}
      for n = 1, math.min(#found, 3) do shown[n] = run:describe(found[n]) end
      return nil, string.format("--point: '%s' is %d points of run %d (%s%s), not one: name each point by all its " ..
        "axes (%s), points separated by ';'", named, #found, id, table.concat(shown, "; "), #found > 3 and "; ..." or "",
        table.concat(run.axes, ", "))
    end
    keys[#keys + 1] = found[1]
  end
  return keys
end

-- gpuexp history accept RUN [--point P] [--note TEXT]: the level of the run's points (or of these)
-- is intended; unaccept RUN [--point P] takes it back.
local function accept(db, o, undo)
  local id, point, note = math.tointeger(tonumber(o.positional[1])), o.point, o.note
  local extra = (o.positional[1] and not id) and o.positional[1] or o.positional[2]
  if extra then
    return fail(EXIT.USAGE, string.format("%s: unknown argument '%s'", undo and "unaccept" or "accept", extra))
  end
  if not id then return fail(EXIT.USAGE, (undo and "unaccept" or "accept") .. ": which run? (gpuexp history list)") end
  local record = verdict.night_record(db, id) -- a night's re-measure stands for its night
  if not record then return fail(EXIT.USAGE, "no run " .. id .. " in the history") end
  if record.kind ~= "nightly" then
    return fail(EXIT.USAGE, string.format("run %d is a %s run: only a night of gpuexp nightly sets a level", id,
      record.kind))
  end
  if record.id ~= id then print(text.format("run %d is a re-measure of run %d: taken as that night", id, record.id)) end
  id = record.id
  if record.excluded == 1 and not undo then
    return fail(EXIT.USAGE, string.format("run %d is excluded: an excluded night is no level, so it cannot set one " ..
      "(gpuexp history include %d first)", id, id))
  end
  local keys
  if point then
    local why
    keys, why = keys_of(db, id, point)
    if not keys then return fail(EXIT.USAGE, why) end
  end
  if undo then
    local removed, why = history.unaccept(db, id, keys)
    if not removed then return fail(EXIT.HISTORY, why) end
    if removed == 0 then return fail(EXIT.USAGE, string.format("run %d has no acceptance%s to take back", id,
      point and (" of " .. point) or "")) end
    print(text.format("took back %d acceptance(s) of run %d", removed, id))
    return 0
  end
  local made, why = history.accept(db, id, keys, note)
  if not made then return fail(EXIT.HISTORY, why) end
  if made == 0 then
    print(string.format("the level of run %d (%s) is accepted already; nothing changed%s", id, point or "every point",
      note and " (its note stays: to change it, unaccept and accept again)" or ""))
    return 0
  end
  -- what it does: the night's states as judged now
  local night = verdict.night(db, id)
  local said = 0
  for _, e in ipairs(night and night.comparison.points or {}) do
    if e.state and e.state.name == "accepted" then
      print(text.format("%s: %s", e.point, e.state.text))
      said = said + 1
    end
  end
  print(text.format("accepted the level of run %d (%s); undo: gpuexp history unaccept %d%s", id,
    point or "every point", id, point and (" --point '" .. point .. "'") or ""))
  if said == 0 then print("(no regression was open at those points: their level at this run is the baseline from now on)") end
  return 0
end

-- gpuexp history site DIR [--limit N]: the history as static HTML in DIR.
local function site(db, o)
  local dir, limit = o.positional[1], o.limit
  if o.positional[2] then return fail(EXIT.USAGE, "site: unknown argument '" .. o.positional[2] .. "'") end
  if not dir then return fail(EXIT.USAGE, "site: which folder? (gpuexp history site DIR)") end
  if dir == "" then return fail(EXIT.USAGE, "site: the folder's name is empty") end
  local made, why = gpuexp._output_folder(dir)
  if not made then return fail(EXIT.WRITE, why) end
  local pages = require("gpuexp.judge.site")
  local model = pages.model(db, limit)
  for _, page in ipairs(pages.files(model)) do
    local written, problem = pcall(csv.write_printed, dir .. "/" .. page[1], page[2])
    if not written and not csv.is_write_error(problem) then error(problem, 0) end -- a bug: exit 70
    if not written then return fail(EXIT.WRITE, message_of(problem)) end
  end
  print(text.format("wrote %s/index.html: %d series", dir, #model.series))
  return 0
end

local merged_runs = 0 -- by merge: an OUT it made is removed again when nothing went into it

-- gpuexp history merge OUT.db IN.db...: another host's runs joined into OUT (made if need be).
local function merge(db, args)
  if #args == 0 then return fail(EXIT.USAGE, "merge: which histories? (gpuexp history merge OUT.db IN.db...)") end
  for _, path in ipairs(args) do
    local added, present = history.merge(db, path)
    if not added then
      local why = tostring(present)
      return fail(EXIT.HISTORY, why:sub(1, #path) == path and why or (path .. ": " .. why))
    end
    merged_runs = merged_runs + added
    print(text.format("%s: %d run(s) added, %d already there", path, added, present))
  end
  return 0
end

-- "unknown command 'lst' (did you mean 'list'?)": for a word that is no subcommand.
local function unknown(command)
  local names = {}
  for _, line in ipairs(catalog.find("history").options) do
    names[#names + 1] = line.subcommand
    names[#names + 1] = line.also
  end
  local hint = gpuexp._did_you_mean(command, names)
  return "unknown command '" .. command .. "'" .. (hint ~= "" and hint or " (gpuexp history --help)")
end

-- The command line: the subcommand and its fields (engine/args.lua, by its catalog entry), and the
-- history file; or nil and the exit code (help printed, a usage error said). top: the command's own
-- fields (commands/runner.lua parsed them), the subcommand its script.
local function parse(top)
  local command = top.script
  if not command or command == "help" then
    io.write(catalog.help("history"))
    return nil, command and EXIT.OK or EXIT.USAGE
  end
  local entry = parse_args.subcommand("history", command)
  if not entry then return nil, fail(EXIT.USAGE, unknown(command)) end
  local o, problem = parse_args.parse(entry, top.script_args)
  if not o then return nil, fail(EXIT.USAGE, command .. ": " .. problem) end
  if o.help then io.write(catalog.help("history")) return nil, EXIT.OK end
  local path = o.history or top.history
  if command == "merge" then -- the first path is the history merged into
    path = table.remove(o.positional, 1)
    if not path then return nil, fail(EXIT.USAGE, "merge: which history to merge into? (gpuexp history merge OUT.db IN.db...)") end
  end
  return command, o, path
end

function M.run(top)
  local command, o, path = parse(top)
  if not command then return o end
  -- each takes its fields (o), or only its words (o.positional)
  local commands = {list = list, export = export, record = record_files, prune = prune, site = site,
    show = function(db, a) return show(db, a.positional) end, merge = function(db, a) return merge(db, a.positional) end,
    accept = function(db, a) return accept(db, a, false) end, unaccept = function(db, a) return accept(db, a, true) end,
    exclude = function(db, a) return set_excluded(db, a.positional, 1) end,
    include = function(db, a) return set_excluded(db, a.positional, 0) end}
  path = path or history.default_path()
  local reading = command == "list" or command == "show" or command == "export" or command == "site"
  local existed = io.open(path, "rb")
  if existed then existed:close() end
  local db, why = history.open(path, reading)
  if not db then return fail(EXIT.HISTORY, why) end
  local ok, code = pcall(commands[command], db, o)
  db:close()
  if command == "merge" and not existed and merged_runs == 0 then -- nothing merged: no OUT made
    history.remove(path)
  end
  -- the history's own failures are error values; anything else is a bug of gpuexp (exit 70)
  if not ok and type(code) ~= "table" then error(code, 0) end
  if not ok then return fail(EXIT.HISTORY, message_of(code)) end
  return code
end

return M
