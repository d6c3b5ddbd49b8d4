-- Significance from samples, for compare: the Mann-Whitney U test (are two runs' samples drawn
-- from one distribution?) and a bootstrap confidence interval of the ratio of their medians. Both
-- use only the samples gpuexp stores with every measured row: no new measurement.
local M = {}

-- The complementary error function (Numerical Recipes' erfcc: relative error under 1.2e-7).
local function erfc(x)
  local z = math.abs(x)
  local t = 1 / (1 + 0.5 * z)
  local r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
    + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
  return x >= 0 and r or 2 - r
end
M.erfc = erfc

-- M.mann_whitney(a, b) -> p (two-sided), U of a, z. Ranks with ties averaged; the normal
-- approximation with the tie correction and a continuity correction (gpuexp's runs have hundreds
-- to thousands of samples; below 8 a side the p-value is rough, and said to be by the caller).
function M.mann_whitney(a, b)
  local n1, n2 = #a, #b
  if n1 == 0 or n2 == 0 then return nil end
  local all = {}
  for _, v in ipairs(a) do all[#all + 1] = {v, 1} end
  for _, v in ipairs(b) do all[#all + 1] = {v, 2} end
  table.sort(all, function(x, y) return x[1] < y[1] end)
  local n = #all
  local rank_a, ties = 0, 0
  local i = 1
  while i <= n do
    local j = i
    while j < n and all[j + 1][1] == all[i][1] do j = j + 1 end
    local rank = (i + j) / 2
    local t = j - i + 1
    if t > 1 then ties = ties + t * t * t - t end
    for k = i, j do if all[k][2] == 1 then rank_a = rank_a + rank end end
    i = j + 1
  end
  local u = rank_a - n1 * (n1 + 1) / 2
  local mean = n1 * n2 / 2
  local variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
  if variance <= 0 then return 1, u, 0 end -- every sample equal
  local difference = u - mean
  local corrected = math.max(0, math.abs(difference) - 0.5)
  local z = corrected / math.sqrt(variance) * (difference < 0 and -1 or 1)
  return math.min(1, erfc(math.abs(z) / math.sqrt(2))), u, z
end

-- The k-th smallest of list[first..last] (Hoare's selection; reorders the list).
local function select(list, k, first, last)
  while first < last do
    local pivot = list[(first + last) // 2]
    local i, j = first, last
    while i <= j do
      while list[i] < pivot do i = i + 1 end
      while list[j] > pivot do j = j - 1 end
      if i <= j then list[i], list[j] = list[j], list[i]; i = i + 1; j = j - 1 end
    end
    if k <= j then last = j elseif k >= i then first = i else return list[k] end
  end
  return list[k]
end

local function median_of(list)
  local n = #list
  local upper = select(list, n // 2 + 1, 1, n)
  if n % 2 == 1 then return upper end
  local lower = -math.huge
  for i = 1, n // 2 do if list[i] > lower then lower = list[i] end end -- the largest of the lower half
  return (lower + upper) / 2
end
M.median = function(values)
  local copy = {table.unpack(values)}
  return #copy > 0 and median_of(copy) or nil
end

-- At most `cap` samples, evenly spaced through the list (the run's order: batches stay represented).
local function thin(values, cap)
  if #values <= cap then return values end
  local out = {}
  for i = 1, cap do out[i] = values[math.floor((i - 0.5) * #values / cap) + 1] end
  return out
end

-- M.bootstrap_ratio(base, new [, reps, cap]) -> low, high: the 95% interval of median(new) /
-- median(base) over `reps` resamples (default 400) of at most `cap` samples a side (default 1000),
-- from a fixed seed, so the same runs always give the same interval.
function M.bootstrap_ratio(base, new, reps, cap)
  reps, cap = reps or 400, cap or 1000
  base, new = thin(base, cap), thin(new, cap)
  local state = 88172645463325252 -- xorshift64: its own generator, math.random's state untouched
  local function random(n)
    state = state ~ (state << 13); state = state ~ (state >> 7); state = state ~ (state << 17)
    return (state >> 11) % n + 1
  end
  local ratios, a, b = {}, {}, {}
  for r = 1, reps do
    for i = 1, #base do a[i] = base[random(#base)] end
    for i = 1, #new do b[i] = new[random(#new)] end
    ratios[r] = median_of(b) / median_of(a)
  end
  table.sort(ratios)
  return ratios[math.max(1, math.floor(0.025 * reps + 0.5))], ratios[math.min(reps, math.floor(0.975 * reps + 0.5))]
end

return M
