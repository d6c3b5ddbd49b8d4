-- Figures of the rule study's nights that need no verdict: the A/A nights' within-run noise, the
-- FMA chain's medians on two H200s (the first suite's nights, suite_v1_data.tgz, were another
-- GPU's), and how the first suite's L2-resident triad moved from night to night against the
-- current suite's. Prints NAME: VALUE lines.
--   RECORD=bench/nightly_rule/h200/nightly_data.tgz RECORD2=bench/nightly_rule/h200/suite_v1_data.tgz \
--     gx bench/recompute/nights.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

local folder = os.tmpname()
os.remove(folder)
local function unpack(archive, into)
  assert(os.execute("mkdir -p " .. quote(into) .. " && tar -xzf " .. quote(archive) .. " -C " .. quote(into) ..
    " --exclude='*.samples.csv' --exclude='*.html' --exclude='*.sqlite'"), "cannot unpack " .. archive)
end
unpack(R.records[1], folder .. "/now")
unpack(R.records[2], folder .. "/v1")

-- each A/A night's rows, in night order
local function nights(root)
  local list, n = {}, 1
  while true do
    local file = io.open(root .. "/nr/aa/" .. n .. "/kernels.csv")
    if not file then break end
    file:close()
    list[#list + 1] = R.csv(root .. "/nr/aa/" .. n .. "/kernels.csv")
    n = n + 1
  end
  assert(#list > 1, "no A/A nights in " .. root)
  return list
end
local now, v1 = nights(folder .. "/now"), nights(folder .. "/v1")

local function medians(list, case)
  local by = {}
  for _, rows in ipairs(list) do
    for _, row in ipairs(rows) do
      if row.case == case then
        by[row.block_size] = by[row.block_size] or {}
        table.insert(by[row.block_size], tonumber(row.median_ms))
      end
    end
  end
  return by
end

-- the largest change of a point's median from one night to the next
local function night_to_night(list, case)
  local largest = 0
  for _, series in pairs(medians(list, case)) do
    for k = 2, #series do largest = math.max(largest, math.abs(series[k] / series[k - 1] - 1) * 100) end
  end
  return largest
end

local function noise(list, case)
  local values = {}
  for _, rows in ipairs(list) do
    for _, row in ipairs(rows) do
      if not case or row.case == case then values[#values + 1] = tonumber(row.noise_pct) end
    end
  end
  return R.min(values), R.max(values)
end

local lo, hi = noise(now)
print(string.format("aa noise: %.2f%% to %.0f%%", lo, hi))
local fma_now, fma_v1, gap = medians(now, "fma"), medians(v1, "fma"), 0
for block, series in pairs(fma_now) do
  gap = math.max(gap, math.abs(R.median(fma_v1[block]) / R.median(series) - 1) * 100)
end
print(string.format("fma between gpus: %.2f%%", gap))
print(string.format("v1 l2 moved: %.0f%%", night_to_night(v1, "triad_l2")))
lo, hi = noise(v1, "triad_l2")
print(string.format("v1 l2 noise: %.0f-%.0f%%", lo, hi))
print(string.format("l2 moved: %.2f%%", night_to_night(now, "triad_l2")))
local all = 0
for _, case in ipairs({"triad_dram", "triad_l2", "fma", "block_sum"}) do all = math.max(all, night_to_night(now, case)) end
print(string.format("aa moved: %.2f%%", all))
os.execute("rm -rf " .. quote(folder))
