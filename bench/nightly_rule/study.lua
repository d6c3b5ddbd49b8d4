-- The regression-rule study on the nights bench/nightly_rule/collect.sh recorded (A/A nights and
-- nights with one kernel made P% slower), every verdict by `gpuexp compare --json` on the nights'
-- files: the tables of RESULTS.md (gpuexp's rule against NVBench's) and THREE_RULES.md (the rules
-- of `gpuexp compare` and Mann-Whitney's p-value alone), and the figures the docs quote.
--   gx bench/nightly_rule/study.lua results DATA   > bench/nightly_rule/RESULTS.md's tables
--   gx bench/nightly_rule/study.lua three DATA     > bench/nightly_rule/THREE_RULES.md
--   gx bench/nightly_rule/study.lua figures DATA   the docs' figures, as NAME: VALUE lines
-- DATA: the folder (nr/ with aa/N and inject/KERNEL_P) or the compressed record itself
-- (bench/nightly_rule/h200/nightly_data.tgz: unpacked into a temporary folder, removed at the end;
-- `results` and the figures of gpuexp's and NVBench's rules need no samples files and leave them
-- packed). The Mann-Whitney rules read every sample: `three` takes about a minute.
local mode, data = arg[1], arg[2]
if not (mode == "results" or mode == "three" or mode == "figures") or not data then
  io.stderr:write("usage: gx bench/nightly_rule/study.lua results|three|figures DATA\n")
  os.exit(2)
end
local json = require("cjson")
local R = dofile(gpuexp.script_dir .. "/../recompute/records.lua")
local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end
local BASELINE = 5 -- gpuexp nightly's default

-- A compressed record is unpacked twice: without the samples files for the rules that read only the
-- CSVs (gpuexp's, NVBench's: the same verdicts, without reading every sample of five nights), and
-- whole for Mann-Whitney's.
local temporary, samples_data
if data:match("%.tgz$") then
  temporary = os.tmpname()
  os.remove(temporary)
  assert(os.execute("mkdir -p " .. quote(temporary .. "/csv") .. " " .. quote(temporary .. "/samples")))
  assert(os.execute("tar -xzf " .. quote(data) .. " -C " .. quote(temporary .. "/csv") ..
    " --exclude='*.samples.csv' --exclude='*.html' --exclude='*.sqlite'"), "cannot unpack " .. data)
  if mode ~= "results" then
    assert(os.execute("tar -xzf " .. quote(data) .. " -C " .. quote(temporary .. "/samples") ..
      " --exclude='*.html' --exclude='*.sqlite'"), "cannot unpack " .. data)
    samples_data = temporary .. "/samples/nr"
  end
  data = temporary .. "/csv/nr"
end
samples_data = samples_data or data
local function finish(code)
  if temporary then os.execute("rm -rf " .. quote(temporary)) end
  os.exit(code)
end

local function night(path) return data .. "/" .. path .. "/kernels.csv" end
local function night_with_samples(path) return samples_data .. "/" .. path .. "/kernels.csv" end

local function listing(folder)
  local names = {}
  local pipe = io.popen("ls " .. quote(data .. "/" .. folder))
  for name in pipe:lines() do names[#names + 1] = name end
  pipe:close()
  return names
end

local aa = {}
for _, name in ipairs(listing("aa")) do if name:match("^%d+$") then aa[#aa + 1] = tonumber(name) end end
table.sort(aa)
local injected = listing("inject")
table.sort(injected, function(a, b)
  local ka, pa = a:match("^(.*)_(%d+)$")
  local kb, pb = b:match("^(.*)_(%d+)$")
  if ka ~= kb then return ka < kb end
  return tonumber(pa) < tonumber(pb)
end)

-- the points of `gpuexp compare --json FLAGS BASES NEW` (exit 1, a regression, is a verdict)
local function compare(bases, new, flags)
  local words = {quote(gpuexp.executable), "compare", "--json"}
  for _, flag in ipairs(flags) do words[#words + 1] = quote(flag) end
  for _, base in ipairs(bases) do words[#words + 1] = quote(base) end
  words[#words + 1] = quote(new)
  local pipe = io.popen(table.concat(words, " ") .. " 2>&1")
  local text = pipe:read("a")
  local _, _, code = pipe:close()
  if code ~= 0 and code ~= 1 then
    io.stderr:write("gpuexp compare failed (" .. tostring(code) .. "): " .. text .. "\n")
    finish(70)
  end
  return json.decode(text).points
end

local function kernel_of(path)
  local kernels = {}
  for _, row in ipairs(R.csv(path)) do kernels["case=" .. row.case .. " block_size=" .. row.block_size] = row.kernel end
  return kernels
end

local function count(points, fn)
  local n = 0
  for _, e in ipairs(points) do if fn(e) then n = n + 1 end end
  return n
end

local function bases_before(n)
  local list = {}
  for _, b in ipairs(aa) do if n - BASELINE <= b and b < n then list[#list + 1] = night("aa/" .. b) end end
  return list
end

-- the baseline of the injected nights: the last BASELINE A/A nights
local function last_nights()
  local last = {}
  for k = math.max(1, #aa - BASELINE + 1), #aa do last[#last + 1] = night("aa/" .. aa[k]) end
  return last
end

-- an injected night (KERNEL_P): its kernel, P, its CSV and each point's kernel
local function injection_of(name)
  local kernel, pct = name:match("^(.*)_(%d+)$")
  local new = night("inject/" .. name)
  return kernel, pct, new, kernel_of(new)
end

local figures = {}
local function figure(name, value) figures[#figures + 1] = name .. ": " .. value end

-- gpuexp's rule against NVBench's (RESULTS.md)
local function results(print_tables)
  local out = print_tables and print or function() end
  local name = data:match("([^/]+)/?$")
  out("# Regression rule study (gpuexp nightly on an H200)\n")
  out(string.format("Data: `%s`; %d A/A nights of `experiments/nightly` (12 points each), each a separate " ..
    "`gpuexp nightly` process; injected nights make one kernel do P%% more work (GPUEXP_INJECT).\n", name, #aa))
  out("gpuexp's rule: baseline = the previous nights (at most 5), the rule of `gpuexp compare` (floor 2%, " ..
    "3x the night-to-night spread, 2x the within-run noise while fewer than 3 nights). NVBench's rule " ..
    "(nvbench_compare.py): same when |change| <= min(noise of the two runs), against the previous night.\n")
  out("## A/A: nights with nothing changed\n")
  out("| night | baseline nights | gpuexp: slower | gpuexp: faster | largest change | smallest margin " ..
    "(threshold - change) | NVBench: SLOW | NVBench: FAST |")
  out("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
  local totals = {g_slow = 0, g_fast = 0, n_slow = 0, n_fast = 0, points = 0}
  local largest = 0
  for k = 2, #aa do
    local n = aa[k]
    local bases = bases_before(n)
    local g = compare(bases, night("aa/" .. n), {"--rule", "gpuexp"})
    local nv = compare({night("aa/" .. (n - 1))}, night("aa/" .. n), {"--rule", "nvbench"})
    local g_slow = count(g, function(e) return e.verdict == "slower" end)
    local g_fast = count(g, function(e) return e.verdict == "faster" end)
    local n_slow = count(nv, function(e) return e.verdict == "slower" end)
    local n_fast = count(nv, function(e) return e.verdict == "faster" end)
    local change, margin = 0, math.huge
    for _, e in ipairs(g) do
      change = math.max(change, math.abs(e.change_pct))
      margin = math.min(margin, e.threshold_pct - math.abs(e.change_pct))
    end
    largest = math.max(largest, change)
    totals.g_slow, totals.g_fast = totals.g_slow + g_slow, totals.g_fast + g_fast
    totals.n_slow, totals.n_fast, totals.points = totals.n_slow + n_slow, totals.n_fast + n_fast, totals.points + #g
    local row = string.format("| %d | %d | %d | %d | %.2f%% | %.2f%% | %d | %d |", n, #bases, g_slow, g_fast, change,
      margin, n_slow, n_fast)
    out(row)
    figure("aa " .. n, row)
  end
  local all = string.format("| all | | **%d** | %d | %.2f%% | | **%d** | %d |", totals.g_slow, totals.g_fast, largest,
    totals.n_slow, totals.n_fast)
  out(all .. "\n")
  figure("aa all", all)
  figure("aa nvbench slow and fast", string.format("%d SLOW and %d FAST", totals.n_slow, totals.n_fast))
  out(string.format("Out of %d point comparisons: gpuexp's rule raised %d false regression alarms, NVBench's %d " ..
    "SLOW and %d FAST claims.\n", totals.points, totals.g_slow, totals.n_slow, totals.n_fast))
  figure("aa largest change", string.format("%.2f%%", largest))
  figure("floor over largest change", string.format("%.0f", 2 / largest))
  local per_night = {}
  for _, line in ipairs(figures) do
    local v = line:match("^aa %d+: | %d+ | %d+ | %d+ | %d+ | ([%d.]+)%%")
    if v then per_night[#per_night + 1] = tonumber(v) end
  end
  figure("aa drift", string.format("%.1f-%.1f%%", R.min(per_night), R.max(per_night)))
  figure("aa comparisons", totals.points)
  figure("aa gpuexp false alarms", totals.g_slow)
  figure("aa nvbench false claims", totals.n_slow + totals.n_fast)

  out("## Injected slowdowns\n")
  out("Baseline: the last 5 A/A nights (NVBench's rule: the last A/A night). Affected points are those of " ..
    "the injected kernel.\n")
  out("| injected | affected points | their measured change | gpuexp: caught | gpuexp: false alarms elsewhere " ..
    "| NVBench: caught | NVBench: false alarms elsewhere | `gpuexp nightly` exit |")
  out("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
  local exits = {}
  local file = io.open(data .. "/exits.txt")
  if file then
    for line in file:lines() do
      local w = {}
      for word in line:gmatch("%S+") do w[#w + 1] = word end
      if w[1] == "inject" then exits[w[2] .. "_" .. w[3]] = w[5] end
    end
    file:close()
  end
  local last = last_nights()
  for _, name in ipairs(injected) do
    local kernel, pct, new, kernels = injection_of(name)
    local g = compare(last, new, {"--rule", "gpuexp"})
    local nv = compare({night("aa/" .. aa[#aa])}, new, {"--rule", "nvbench"})
    local affected, changes = {}, {}
    for _, e in ipairs(g) do
      if kernels[e.point] == kernel then affected[#affected + 1] = e; changes[#changes + 1] = e.change_pct end
    end
    table.sort(changes)
    local caught = count(affected, function(e) return e.verdict == "slower" end)
    local false_g = count(g, function(e) return e.verdict == "slower" and kernels[e.point] ~= kernel end)
    local nv_caught = count(nv, function(e) return e.verdict == "slower" and kernels[e.point] == kernel end)
    local false_nv = count(nv, function(e) return e.verdict ~= "same" and kernels[e.point] ~= kernel end)
    local row = string.format("| %s +%s%% | %d | %+.2f%% .. %+.2f%% | %d/%d | %d | %d/%d | %d | %s |", kernel, pct,
      #affected, changes[1], changes[#changes], caught, #affected, false_g, nv_caught, #affected, false_nv,
      exits[name] or "?")
    out(row)
    figure("inject " .. name, row)
    local by_case = {}
    for _, e in ipairs(affected) do
      local case = e.point:match("^case=(%S+)")
      by_case[case] = by_case[case] or {}
      table.insert(by_case[case], e.change_pct)
    end
    for case, list in pairs(by_case) do
      figure("inject " .. name .. " " .. case, string.format("%.0f-%.0f%%", R.min(list), R.max(list)))
    end
    figure("inject " .. name .. " caught", caught .. " of " .. #affected)
  end
end

-- the three rules of `gpuexp compare` and the p-value alone (THREE_RULES.md)
local RULES = {
  {"gpuexp", {"--rule", "gpuexp"}, "last 5 nights"},
  {"nvbench", {"--rule", "nvbench"}, "last night"},
  {"mannwhitney", {"--rule", "mannwhitney"}, "last night's samples, 2% floor"},
  {"p < 0.05 alone", {"--rule", "mannwhitney", "--threshold", "0"}, "last night's samples, no floor"},
}
local function three()
  local false_aa, caught, missed, false_inject = {}, {}, {}, {}
  for _, rule in ipairs(RULES) do false_aa[rule[1]], caught[rule[1]], missed[rule[1]], false_inject[rule[1]] = 0, 0, {}, 0 end
  local aa_points, affected_total, per_injection = 0, 0, {}
  for k = 2, #aa do
    local n = aa[k]
    for _, rule in ipairs(RULES) do
      local name, flags = rule[1], rule[2]
      local points
      if name == "gpuexp" then
        points = compare(bases_before(n), night("aa/" .. n), flags)
      elseif name == "nvbench" then
        points = compare({night("aa/" .. (n - 1))}, night("aa/" .. n), flags)
      else
        points = compare({night_with_samples("aa/" .. (n - 1))}, night_with_samples("aa/" .. n), flags)
      end
      false_aa[name] = false_aa[name] + count(points, function(e) return e.verdict ~= "same" end)
      if name == "gpuexp" then aa_points = aa_points + #points end
    end
  end
  local last = last_nights()
  for _, injection in ipairs(injected) do
    local kernel, pct, new, kernels = injection_of(injection)
    local row = {kernel .. " +" .. pct .. "%"}
    for _, rule in ipairs(RULES) do
      local name, flags = rule[1], rule[2]
      local points
      if name == "gpuexp" then
        points = compare(last, new, flags)
      elseif name == "nvbench" then
        points = compare({night("aa/" .. aa[#aa])}, new, flags)
      else
        points = compare({night_with_samples("aa/" .. aa[#aa])}, night_with_samples("inject/" .. injection), flags)
      end
      local affected = {}
      for _, e in ipairs(points) do if kernels[e.point] == kernel then affected[#affected + 1] = e end end
      local hits = count(affected, function(e) return e.verdict == "slower" end)
      caught[name] = caught[name] + hits
      for _, e in ipairs(affected) do
        if e.verdict ~= "slower" then table.insert(missed[name], injection .. " " .. e.point) end
      end
      false_inject[name] = false_inject[name] + count(points, function(e)
        return e.verdict ~= "same" and kernels[e.point] ~= kernel end)
      row[#row + 1] = hits .. "/" .. #affected
      if name == "gpuexp" then affected_total = affected_total + #affected end
    end
    per_injection[#per_injection + 1] = row
  end
  local lines = {}
  local function out(line) lines[#lines + 1] = line end
  out("# Three rules on the same H200 nights (A/A and injected slowdowns)\n")
  out(string.format("Data: the nights of `bench/nightly_rule/h200/nightly_data.tgz` (%d A/A nights of the shipped " ..
    "suite, 12 points each, every sample kept; %d nights with one kernel made P%% slower). Each rule judges the same " ..
    "files with `gpuexp compare`.\n", #aa, #injected))
  out(string.format("| rule | baseline | A/A false calls (of %d) | injected points caught (of %d) | false calls beside " ..
    "the injections |", aa_points, affected_total))
  out("| --- | --- | ---: | ---: | ---: |")
  for _, rule in ipairs(RULES) do
    local name = rule[1]
    local row = string.format("| %s | %s | %d | %d | %d |", name, rule[3], false_aa[name], caught[name],
      false_inject[name])
    out(row)
    figure("rule " .. name, row)
    figure("rule " .. name .. " false calls", false_aa[name])
    figure("rule " .. name .. " counts", string.format("%d | %d | %d", false_aa[name], caught[name], false_inject[name]))
    figure("rule " .. name .. " caught", caught[name] .. " of " .. affected_total)
  end
  figure("three aa comparisons", aa_points)
  figure("three affected points", affected_total)
  local summary, by_each = {}, true
  for _, rule in ipairs(RULES) do
    summary[#summary + 1] = rule[1] .. " " .. false_aa[rule[1]]
    by_each = by_each and caught[rule[1]] == affected_total
  end
  figure("three summary", aa_points .. " A/A comparisons " .. table.concat(summary, ", "))
  figure("three caught by each", by_each and (affected_total .. " of " .. affected_total .. " by each") or "not by each")
  out("\nPer injection (points caught):\n")
  local names = {}
  for _, rule in ipairs(RULES) do names[#names + 1] = rule[1] end
  out("| injected | " .. table.concat(names, " | ") .. " |")
  out("| --- |" .. string.rep(" ---: |", #RULES))
  for _, row in ipairs(per_injection) do
    local line = "| " .. table.concat(row, " | ") .. " |"
    out(line)
    figure("per injection " .. row[1], line)
  end
  for _, rule in ipairs(RULES) do
    if #missed[rule[1]] > 0 then out("\n" .. rule[1] .. " missed: " .. table.concat(missed[rule[1]], ", ")) end
  end
  return table.concat(lines, "\n")
end

if mode == "results" then
  results(true)
elseif mode == "three" then
  print(three())
else
  results(false)
  three()
  for _, line in ipairs(figures) do print(line) end
end
finish(0)
