-- Plots through gnuplot (Debian's gnuplot-nox): line plots of any two CSV columns, one line per
-- group, and roofline plots (log-log, memory and compute roofs, one point per row). PNG or SVG by
-- the output's extension.
local csv = require("gpuexp.store.csv")
local text = require("gpuexp.store.text")
local M = {}

-- Every text from data (titles, group names, labels) reaches gnuplot only as a quoted string
-- constant (text.gnuplot); the data itself only in files; enhanced text (markup in strings) off.
local quote = text.gnuplot

local function terminal(out)
  if out:find("[%c\127]") then gpuexp.error("usage", "plot: the output's name holds a control character", 3) end
  if out:match("%.svg$") then return "set terminal svg size 1000,650 dynamic noenhanced background rgb 'white'" end
  if out:match("%.png$") then return "set terminal pngcairo size 1000,650 noenhanced" end
  gpuexp.error("usage", "plot: the output must end in .png or .svg, got " .. out, 3)
end


M.GNUPLOT_TIMEOUT_S = 120 -- a gnuplot that hangs (a huge plot, a broken font setup) ends here

-- Runs fn(folder) with a folder of its own for one plot's files (data, script, log, image) in
-- $TMPDIR, removed with everything in it whatever happens; returns what fn returns.
local function with_folder(fn)
  local code, _, _, made = gpuexp._process.run({"mktemp", "-d", (os.getenv("TMPDIR") or "/tmp") .. "/gpuexp-plot.XXXXXX"},
    {capture = true})
  local folder = code == 0 and made and made:gsub("%s+$", "") or ""
  if folder == "" then gpuexp.error("system", "plot: cannot make a temporary folder (mktemp -d failed)", 3) end
  local results = table.pack(pcall(fn, folder))
  gpuexp._process.run({"rm", "-rf", "--", folder})
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

local function write_file(path, text)
  local file, why = io.open(path, "w")
  if not file then gpuexp.error("system", "plot: cannot write " .. path .. ": " .. tostring(why), 3) end
  local ok, problem = file:write(text)
  file:close()
  if not ok then gpuexp.error("system", "plot: cannot write " .. path .. ": " .. tostring(problem), 3) end
end

-- Runs a gnuplot script (lines[1] the terminal; its own process group, a time limit); raises with
-- gnuplot's message when it fails or writes nothing. gnuplot draws into a file of the plot's
-- folder; the image then goes to out as every output does (a unique temporary beside it and a
-- rename, a device written in place, a planted link never followed), so gnuplot never opens a
-- path the user named.
local function render(lines, out, folder)
  local base = folder .. "/plot"
  local image = base .. ".image"
  table.insert(lines, 2, "set output " .. quote(image))
  write_file(base .. ".gp", table.concat(lines, "\n") .. "\n")
  local code, stop, timed_out = gpuexp._process.run({"gnuplot", base .. ".gp"},
    {output = base .. ".log", timeout_s = M.GNUPLOT_TIMEOUT_S})
  if stop ~= 0 then gpuexp.error("interrupted", "plot: interrupted while gnuplot ran", 3) end
  local ok = code == 0 and not timed_out
  local log = io.open(base .. ".log")
  local message = log and log:read("a") or ""
  if log then log:close() end
  if timed_out then message = string.format("it ran past %g s and was ended", M.GNUPLOT_TIMEOUT_S) end
  local drawn = io.open(image, "rb")
  local bytes = drawn and drawn:read("a")
  if drawn then drawn:close() end
  if not ok or not bytes or bytes == "" then
    gpuexp.error("system", "plot: gnuplot failed" .. (message ~= "" and (": " .. message) or
      " (is gnuplot installed? apt-get install gnuplot-nox)"), 3)
  end
  csv.write_file(out, bytes, true)
  return out
end

-- The common part of every plot: terminal, title, the settings, then one curve per data file.
local function draw(out, title, settings, curves, files, style, folder)
  local chosen = terminal(out)
  local lines = {chosen, "set grid", "set key outside right", "set title " .. quote(title)}
  for _, line in ipairs(settings) do lines[#lines + 1] = line end
  for _, f in ipairs(files) do curves[#curves + 1] = quote(f[2]) .. " using 1:2 " .. style .. " title " .. quote(f[1]) end
  lines[#lines + 1] = "plot " .. table.concat(curves, ", \\\n  ")
  render(lines, out, folder)
  return out
end

-- The rows to plot, after checking that the columns spec names under keys exist: a misspelled
-- column (--by strid) is refused with the columns there are, never drawn as one series of nil.
local function rows_of(spec, keys, what)
  local rows, columns = spec.rows, nil
  if not rows then
    if not spec.csv then gpuexp.error("usage", "plot: give csv = path or rows = {...}", 3) end
    rows, columns = csv.read(spec.csv, true)
  else
    local seen = {}
    columns = {}
    for _, row in ipairs(rows) do
      for name in pairs(row) do
        if not seen[name] then seen[name] = true; columns[#columns + 1] = name end
      end
    end
    table.sort(columns)
  end
  local known = {}
  for _, name in ipairs(columns) do known[name] = true end
  for _, key in ipairs(keys) do
    local name = spec[key]
    if name ~= nil and not known[name] then
      gpuexp.error("usage", string.format("%s: %s '%s' is not a column of %s%s; its columns: %s", what, key,
        tostring(name), spec.csv or "the rows", gpuexp._did_you_mean(tostring(name), columns),
        table.concat(columns, ", ")))
    end
  end
  return rows
end

-- Writes one data file per group of rows; returns {{name, path}, ...} sorted by name.
local function group_files(rows, by, columns_fn, folder)
  local groups, order = {}, {}
  for _, row in ipairs(rows) do
    local values = columns_fn(row)
    if values then
      local key = by and tostring(row[by]) or "all"
      if not groups[key] then groups[key] = {}; order[#order + 1] = key end
      table.insert(groups[key], values)
    end
  end
  table.sort(order)
  local files = {}
  for _, key in ipairs(order) do
    local points = groups[key]
    table.sort(points, function(a, b) return a[1] < b[1] end)
    local path = string.format("%s/%d.dat", folder, #files + 1)
    local text = {}
    for n, p in ipairs(points) do text[n] = table.concat(p, " ") end
    write_file(path, table.concat(text, "\n") .. "\n")
    files[#files + 1] = {key, path}
  end
  return files
end

local option_keys = require("gpuexp.api.option_keys")
local function key_set(names)
  local set = {}
  for name in names:gmatch("%S+") do set[name] = true end
  return set
end

-- M.lines{csv= | rows=, x=, y=, by=, out=, logx=, logy=, title=, xlabel=, ylabel=} -> out
local LINES_KEYS = key_set("csv rows x y by out logx logy title xlabel ylabel")
function M.lines(spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "plot: expected a table {csv= or rows=, x=, y=, out=, ...}", 2) end
  option_keys.check(spec, LINES_KEYS, "plot")
  local rows = rows_of(spec, {"x", "y", "by"}, "plot")
  if not spec.x or not spec.y or not spec.out then gpuexp.error("usage", "plot: x, y and out are required", 2) end
  terminal(spec.out) -- a bad output name is said before anything is made
  return with_folder(function(folder)
    local files = group_files(rows, spec.by, function(row)
      local x, y = tonumber(row[spec.x]), tonumber(row[spec.y])
      if x and y then return {x, y} end
    end, folder)
    if #files == 0 then gpuexp.error("usage", "plot: no row has numbers in both '" .. spec.x .. "' and '" .. spec.y .. "'", 2) end
    local settings = {"set xlabel " .. quote(spec.xlabel or spec.x), "set ylabel " .. quote(spec.ylabel or spec.y)}
    if spec.logx then settings[#settings + 1] = "set logscale x 2" end
    if spec.logy then settings[#settings + 1] = "set logscale y" end
    return draw(spec.out, spec.title or (spec.y .. " vs " .. spec.x .. (spec.by and (" by " .. spec.by) or "")), settings,
      {}, files, "with linespoints", folder)
  end)
end

-- M.history{series = {{id=, value=}...}, center=, limit=, new = {id=, value=}, confirm=, out=,
-- title=, ylabel=} -> out: a point's value over the recorded runs, the baseline's centre and the
-- regression limit as lines, this run's value (and its re-measure) marked.
local function history_in(spec, folder)
  local files, curves = {}, {}
  local function data(points)
    local path = string.format("%s/%d.dat", folder, #files + 1)
    local text = {}
    for n, p in ipairs(points) do text[n] = string.format("%d %.10g", p.id, p.value) end
    write_file(path, table.concat(text, "\n") .. "\n")
    return path
  end
  local function curve(points, style, title)
    if #points == 0 then return end
    local path = data(points)
    files[#files + 1] = path
    curves[#curves + 1] = quote(path) .. " using 1:2 " .. style .. " title " .. quote(title)
  end
  curve(spec.series, "with linespoints pt 7 ps 0.8 lc rgb '#4477aa'", "recorded runs")
  curve({spec.new}, "with points pt 9 ps 2.2 lc rgb '#cc3311'", "this night")
  if spec.confirm then curve({spec.confirm}, "with points pt 5 ps 1.6 lc rgb '#ee7733'", "re-measured") end
  local lines = {terminal(spec.out), "set grid", "set key outside right",
    "set title " .. quote(spec.title), "set xlabel 'history run'", "set ylabel " .. quote(spec.ylabel),
    "set offsets graph 0.05, graph 0.05, graph 0.1, graph 0.1",
    string.format("set arrow from graph 0, first %.10g to graph 1, first %.10g nohead dt 2 lc rgb 'gray40'", spec.center, spec.center),
    string.format("set label 'baseline median' at graph 0.01, first %.10g offset 0,0.6 tc rgb 'gray40'", spec.center),
    string.format("set arrow from graph 0, first %.10g to graph 1, first %.10g nohead dt 3 lc rgb '#cc3311'", spec.limit, spec.limit),
    string.format("set label 'regression limit' at graph 0.01, first %.10g offset 0,0.6 tc rgb '#cc3311'", spec.limit),
    "plot " .. table.concat(curves, ", \\\n  ")}
  render(lines, spec.out, folder)
  return spec.out
end

function M.history(spec)
  return with_folder(function(folder) return history_in(spec, folder) end)
end

local function roofline_in(spec, rows, folder)
  local files = group_files(rows, spec.by, function(row)
    local flops, bytes, ms = tonumber(row[spec.flops]), tonumber(row[spec.bytes]), tonumber(row[spec.time_ms])
    if flops and bytes and ms and flops > 0 and bytes > 0 and ms > 0 then
      return {flops / bytes, flops / (ms * 1e-3) / 1e9}
    end
  end, folder)
  if #files == 0 then gpuexp.error("usage", "roofline plot: no row with positive FLOPs, bytes and time", 2) end
  local knee = spec.peak_gflops / spec.peak_gbps
  local title = spec.title or string.format("roofline: %.0f GB/s, %.0f GFLOP/s, knee %.1f FLOP/byte%s", spec.peak_gbps,
    spec.peak_gflops, knee, spec.ceiling_source and (" (" .. spec.ceiling_source .. ")") or "")
  local settings = {"set logscale xy 10", "set xrange [0.01:10000]", "set xlabel 'arithmetic intensity (FLOP/byte)'",
    "set ylabel 'GFLOP/s'", string.format("roof(x) = (x * %.6g < %.6g) ? x * %.6g : %.6g", spec.peak_gbps,
      spec.peak_gflops, spec.peak_gbps, spec.peak_gflops)}
  local curves = {"roof(x) with lines lw 2 lc rgb 'black' title " .. quote(spec.roof_name or "roofs")}
  -- more memory roofs (a hierarchical roofline: L1, L2 beside DRAM): {{name =, gbps =}...}
  for i, roof in ipairs(spec.roofs or {}) do
    settings[#settings + 1] = string.format("roof%d(x) = (x * %.6g < %.6g) ? x * %.6g : %.6g", i, roof.gbps,
      spec.peak_gflops, roof.gbps, spec.peak_gflops)
    curves[#curves + 1] = string.format("roof%d(x) with lines lw 1 dt %d title %s", i, i + 1, quote(roof.name))
  end
  return draw(spec.out, title, settings, curves, files, "with points pt 7 ps 1.2", folder)
end

-- M.roofline{csv= | rows=, flops=, bytes=, time_ms=, by=, out=, peak_gflops=, peak_gbps=, title=,
--            ceiling_source=, roof_name=, roofs = {{name=, gbps=}...}} -> out: arithmetic intensity (FLOP/byte) against GFLOP/s, log-log,
-- the memory roof peak_gbps x intensity and the compute roof peak_gflops.
local ROOFLINE_KEYS = key_set("csv rows flops bytes time_ms by out peak_gflops peak_gbps title ceiling_source " ..
  "roof_name roofs")
function M.roofline(spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "roofline plot: expected a table {csv= or rows=, flops=, ...}", 2) end
  option_keys.check(spec, ROOFLINE_KEYS, "roofline plot")
  local rows = rows_of(spec, {"flops", "bytes", "time_ms", "by"}, "roofline plot")
  for _, key in ipairs({"flops", "bytes", "time_ms", "out", "peak_gflops", "peak_gbps"}) do
    if not spec[key] then gpuexp.error("usage", "roofline plot: '" .. key .. "' is required", 2) end
  end
  terminal(spec.out)
  return with_folder(function(folder) return roofline_in(spec, rows, folder) end)
end

return M
