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

-- A sorted copy of a list of numbers (copied one by one: a list of any length, never through the
-- stack as table.unpack would: a million samples exceed its limit).
local function sorted_copy(list)
  local copy = {}
  for i = 1, #list do copy[i] = list[i] end
  table.sort(copy)
  return copy
end
M.sorted_copy = sorted_copy

-- M.mann_whitney(a, b) -> p (two-sided), U of a, z. Ranks with ties averaged; the normal
-- approximation with the tie correction and a continuity correction (gpuexp's runs have hundreds
-- to thousands of samples; below 8 a side the p-value is rough, and said to be by the caller).
-- The two sides are sorted apart and merged: two lists of numbers, no table per sample.
function M.mann_whitney(a, b)
  local n1, n2 = #a, #b
  if n1 == 0 or n2 == 0 then return nil end
  local x, y = sorted_copy(a), sorted_copy(b)
  local n = n1 + n2
  local rank_a, ties = 0, 0
  local i, j, position = 1, 1, 0
  while i <= n1 or j <= n2 do
    -- the next value and how many of each side hold it
    local value
    if j > n2 or (i <= n1 and x[i] <= y[j]) then value = x[i] else value = y[j] end
    local in_a, in_b = 0, 0
    while i <= n1 and x[i] == value do in_a = in_a + 1; i = i + 1 end
    while j <= n2 and y[j] == value do in_b = in_b + 1; j = j + 1 end
    local t = in_a + in_b
    local rank = position + (t + 1) / 2
    if t > 1 then ties = ties + t * t * t - t end
    rank_a = rank_a + in_a * rank
    position = position + t
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
-- M.median(values [, first, last]) -> the median of values[first..last] (the whole list by
-- default), or nil for none; the list is not changed.
function M.median(values, first, last)
  first, last = first or 1, last or #values
  if last < first then return nil end
  local copy = {}
  for i = first, last do copy[#copy + 1] = values[i] end
  return median_of(copy)
end

-- M.range(values) -> the smallest and the largest of a list (nil for none), with no unpacking.
function M.range(values)
  local low, high
  for _, v in ipairs(values) do
    if not low or v < low then low = v end
    if not high or v > high then high = v end
  end
  return low, high
end

-- M.pool([cap, seed]) -> a pool of samples in bounded memory, for runs whose samples are counted
-- in millions (gpuexp ab on a 3 us kernel: about 10^6 a side): the count, the exact mean and
-- standard deviation (Welford's running sums), the smallest and largest, and a uniform random
-- sample of at most cap values (default M.POOL_CAP; Vitter's algorithm R from a fixed seed, so a
-- run is reproducible) that stands for the pool in its median. The median of a uniform sample of
-- K values is off the whole pool's by about 1.25 sigma / sqrt(K) (0.01 sigma at K = 16384): a
-- pooled median is shown beside a paired verdict, never the verdict itself, which is computed
-- from each block's own samples. pool:add(v), pool:add_all(list), pool:summary() -> {count, mean,
-- stddev, noise_pct, min, max, median, kept}.
M.POOL_CAP = 16384
local Pool = {}
Pool.__index = Pool

function M.pool(cap, seed)
  return setmetatable({cap = cap or M.POOL_CAP, kept = {}, count = 0, mean = 0, squares = 0,
    state = seed or 2463534242}, Pool)
end

function Pool:add(v)
  local n = self.count + 1
  self.count = n
  local delta = v - self.mean
  self.mean = self.mean + delta / n
  self.squares = self.squares + delta * (v - self.mean)
  if not self.min or v < self.min then self.min = v end
  if not self.max or v > self.max then self.max = v end
  if n <= self.cap then
    self.kept[n] = v
  else
    local state = self.state -- xorshift64: the pool's own generator
    state = state ~ (state << 13); state = state ~ (state >> 7); state = state ~ (state << 17)
    self.state = state
    local slot = (state >> 1) % n + 1
    if slot <= self.cap then self.kept[slot] = v end
  end
end

function Pool:add_all(list)
  for i = 1, #list do self:add(list[i]) end
end

function Pool:summary()
  local n = self.count
  local stddev = n > 1 and math.sqrt(self.squares / (n - 1)) or 0
  return {count = n, mean = n > 0 and self.mean or nil, stddev = stddev,
    noise_pct = n > 0 and self.mean ~= 0 and 100 * stddev / self.mean or 0, min = self.min, max = self.max,
    median = n > 0 and M.median(self.kept) or nil, kept = #self.kept}
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
