-- Side by side: gpuexp's in-process values (DIR/OURS.csv, default gpuexp) against ncu's (--page raw):
-- PEER "per_point" reads DIR/ncu_K.csv (one ncu process per point), "one" reads the K-th kernel of
-- DIR/ncu_all.csv (one ncu process for every launch), not counting gpuexp's own kernels. Counts must agree within 2% (replay noise),
-- percentages and ratios within 2 points.
local dir = assert(arg[1], "usage: gpuexp bench/compare_ncu.lua DIR [OURS] [per_point|one]")
local ours_name, peer = arg[2] or "gpuexp", arg[3] or "per_point"
local ours = gpuexp.csv.read(dir .. "/" .. ours_name .. ".csv")
local ncu_csv = dofile(gpuexp.script_dir .. "/ncu_csv.lua")
-- the values of the kernel-th launch (gpuexp's own kernels are not sweep points) by metric name
local function ncu_values(path, kernel)
  local csv = ncu_csv.read(path)
  if not csv then return nil end
  local has_names = false
  for _, name in ipairs(csv.header) do has_names = has_names or name == "Kernel Name" end
  assert(has_names, path .. ": no 'Kernel Name' column")
  local launch = csv.launches[kernel or 1]
  if not launch then return nil end
  local result = {}
  for _, name in ipairs(csv.header) do result[name] = ncu_csv.number(launch[name]) end
  return result
end
local rows, worst, compared, outside = {}, {}, 0, 0
for _, row in ipairs(ours) do
  local theirs = peer == "one" and ncu_values(dir .. "/ncu_all.csv", row.point)
    or ncu_values(string.format("%s/ncu_%d.csv", dir, row.point))
  for name, value in pairs(row) do
    if name:find("__") and theirs and theirs[name] and type(value) == "number" then
      local reference = theirs[name]
      -- percentages: 2 points; ratios and counts: 2% (counts also pass within 1 KiB, noise on tiny kernels)
      local is_pct = name:find("pct")
      local difference = is_pct and math.abs(value - reference) or
        (reference ~= 0 and math.abs(value - reference) / math.abs(reference) * 100 or math.abs(value))
      local ok = difference <= 2 or (not is_pct and not name:find("ratio") and math.abs(value - reference) <= 1024)
      compared = compared + 1
      if not ok then outside = outside + 1 end
      rows[#rows + 1] = {point = row.name, metric = name, gpuexp = value, ncu = reference,
        difference = difference, unit = is_pct and "points" or "%", within = ok}
    end
  end
end
table.sort(rows, function(a, b) return a.point < b.point or (a.point == b.point and a.metric < b.metric) end)
local writer = gpuexp.csv.open(string.format("%s/compare_%s_%s.csv", dir, ours_name, peer))
writer:header({"point", "metric", "gpuexp", "ncu", "difference", "unit", "within"})
for _, r in ipairs(rows) do writer:row(r) end
writer:close()
gpuexp.print_table(rows, {"point", "metric", "gpuexp", "ncu", "difference", "unit", "within"})
print(string.format("%d values compared with ncu, %d outside tolerance (percentages 2 points, ratios 2%%, counts 2%% or 1 KiB)",
  compared, outside))
