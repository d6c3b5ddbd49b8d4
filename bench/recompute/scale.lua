-- bench/RESULTS.md's table of the run engine against the number of points: bench/scale.sh's
-- tables before ($RECORD, cpu/scale_before.md) and after ($RECORD2, cpu/scale_after.md) the change,
-- each line of the page's table and its peak memory, as NAME: VALUE lines.
--   RECORD=bench/cpu/scale_before.md RECORD2=bench/cpu/scale_after.md gx bench/recompute/scale.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")

local function table_of(path)
  local rows, header = {}, nil
  for line in R.text(path):gmatch("[^\n]+") do
    if line:match("^|") and not line:match("^| %-%-%-") then
      local cells = {}
      for cell in line:gmatch("|%s*([^|]-)%s*%f[|]") do cells[#cells + 1] = cell end
      if not header then
        header = cells
      else
        local row = {}
        for k, name in ipairs(header) do row[name] = tonumber(cells[k]) or cells[k] end
        rows[row.what .. " " .. row.points] = row
      end
    end
  end
  return rows
end
local before, after = table_of(R.records[1]), table_of(R.records[2])
local function us(t, what, points) return assert(t[what .. " " .. points], what .. " " .. points)["us/point"] end

local function line(name, fn, last)
  local cells = {}
  for _, points in ipairs({1000, 10000, 100000}) do
    cells[#cells + 1] = string.format("%.0f us", fn(before, points))
    cells[#cells + 1] = string.format("%.0f us", fn(after, points))
  end
  print(name .. ": " .. table.concat(cells, " | ") .. (last or ""))
end
line("supervised", function(t, p) return us(t, "supervised", p) end)
line("inline", function(t, p) return us(t, "inline", p) end)
line("over inline", function(t, p) return us(t, "supervised", p) - us(t, "inline", p) end, " (target <= 60)")
line("resume", function(t, p) return us(t, "resume 1", p) end)
line("compare", function(t, p) return us(t, "compare", p) end)
line("merge", function(t, p) return us(t, "merge 4", p) end)
local peaks = {}
for _, pair in ipairs({{"supervised", "supervised"}, {"resume", "resume 1"}, {"compare", "compare"}, {"merge", "merge 4"}}) do
  peaks[#peaks + 1] = string.format("%s %d -> %d MB", pair[1], before[pair[2] .. " 100000"]["peak MB"],
    after[pair[2] .. " 100000"]["peak MB"])
end
print("peak memory: " .. table.concat(peaks, ", "))
print(string.format("resume 100k: %.2f s", after["resume 1 100000"]["total s"]))
print(string.format("inline 100k: %.2f s", after["inline 100000"]["total s"]))
print(string.format("supervised 1k memory: %d -> %d MB", before["supervised 1000"]["peak MB"], after["supervised 1000"]["peak MB"]))
