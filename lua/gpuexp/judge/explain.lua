-- What changed, as the hardware sees it, when a point got slower: its counters against its
-- baseline nights'. The counters are columns of the point's row (ctr_* below, and the SM clock);
-- a run that has none gets no explanation. Each counter is compared with the median of the
-- baseline rows (the nights at the level the verdict was judged against: for a creep, the accepted
-- level's nights, never the creeping ones; never a night of an open regression); a change is named
-- when it is past the counter's noise: twice its floor, three times the spread of the point's
-- baseline nights (noise: up to 20 of them, no night of a regression among them) and every one of
-- those nights by the floor. Counts near zero are no evidence: a change of bytes is named only
-- when it moves at least BYTES_FLOOR_GBPS over the kernel's time (under that it could not move the
-- time by 1% even at a GPU's full bandwidth: a kernel that lives in L2 moves a few KB of DRAM by
-- 40% from night to night), a change of the L2 hit rate only when the misses it makes move that
-- many bytes, and a change of requests (local, atomic), or a ratio per request (sectors,
-- wavefronts), only when those requests are at least REQUEST_SHARE of the warp instructions.
--
-- A named change must account for the time that moved. The accounting model: each counter
-- stands for a resource, and its effect is the change of the time if the kernel's time were
-- proportional to that resource (an upper bound: a kernel limited by it):
--   instructions, DRAM bytes, L2 bytes    the counter's own ratio (new / base)
--   L2 and L1 hit rate                    the misses' ratio ((100 - new) / (100 - base)): misses go one level down
--   bank conflicts                        shared wavefronts: wavefronts per request x shared requests
--   coalescing                            global sectors: sectors per request x requests, loads and stores together
--   divergence                            base lanes / new lanes: the same thread work in more warp instructions
--   achieved occupancy, SM clock,         base / new: fewer warps to hide latency, fewer cycles a second,
--   SMs active                            fewer SMs at work
--   registers, shared memory bytes        through the achieved occupancy they moved (none when it stayed)
--   spills, local memory (stack frame,    through the instructions, the L2 traffic or the warp cycles they
--   local requests)                       added (local memory that hits in L1 costs latency, not bytes)
--   launch shape (blocks, threads a       the SMs given a block (base / new share), the achieved
--   block)                                occupancy it moved, or the waves' rounding up (the largest):
--                                         blocks of one duration run in whole waves, so the same work
--                                         in w waves takes ceil(w) / w wave-times a wave's work (a
--                                         tail wave: 1.125 waves take 2)
--   atomics                               through the warp cycles per instruction they added (the waits of
--                                         contended atomics), else their own ratio
--   tensor pipe                           when its work (activity x time) fell by half: through the
--                                         instructions of the path that replaced it
--   FP64 pipe                             its work now less its work before, in base times: activity x time
--   warp cycles per issued instruction    the warp cycles' ratio: instructions x cycles per issued instruction
--                                         (the stall reasons' shares in them say which waits grew); when
--                                         the waits that grew are those of a telltale that moved (memory
--                                         waits and more sectors per request; shared-memory waits and more
--                                         wavefronts), the telltale is their cause and takes their effect
-- A change accounts for a time change of T% when its effect is at least half of T (ACCOUNT_SHARE):
-- a kernel rarely has one limiter, but a change far smaller than the time's cannot be its cause.
-- Nothing accounts for a time that did not rise past its own noise (the range and three spreads of
-- the noise nights' times, as for a counter): a counter that moved then explains nothing.
-- The changes that account come first, the most telling first; the others follow, each marked
-- "(does not explain it)"; when none accounts, the explanation says so first (the nightly then
-- attaches gpuexp diagnose's verdict, taken in its confirm stage). Counters that did not move are
-- said too: then the time moved alone, and the clock or the machine is where to look.
local csv = require("gpuexp.store.csv")
local history = require("gpuexp.store.history")
local rule = require("gpuexp.judge.rule")
local stats = require("gpuexp.judge.stats")

local M = {}

M.NOISE_NIGHTS = 20 -- the nights whose counters tell the explainer their noise (the baseline's among them)

M.ACCOUNT_SHARE = 0.5
M.NOISE_SPREADS = 3 -- a change is past the noise at this many spreads of the recent nights
M.INCIDENTAL = " (does not explain it)"
M.BYTES_FLOOR_GBPS = 20 -- a change of bytes under this rate over the kernel's time is no change (0.6% of an H100's DRAM)
M.REQUEST_SHARE = 0.001 -- requests under this share of the warp instructions are too few to mean anything
M.STALL_SHARE_FLOOR = 5 -- points: a stall reason's share that moved less is not listed

-- The counters. floor: the smallest relative change (percent) or absolute change (points, for
-- percentages and counts of a few) called a change. rank: where a change of it goes in the
-- explanation, most telling first (ranks of the work and the traffic depend on what the kernel
-- waits on: see explain below). cause: what a change of it is called. bytes: a count of bytes (the
-- rate floor); requests: a count of requests, per: the requests a ratio is per (the share floor).
M.COUNTERS = {
  {column = "ctr_spill_bytes", label = "spilled bytes", kind = "count", floor = 1, rank = 1},
  {column = "ctr_stack_bytes", label = "stack frame bytes", kind = "count", floor = 1, rank = 1.5},
  {column = "ctr_local_requests", label = "local memory requests", kind = "relative", floor = 5, unit = "",
    cause = "local memory", rank = 1.5, requests = true},
  {column = "ctr_blocks", label = "blocks", kind = "count", floor = 1, rank = 1.8},
  {column = "ctr_block_threads", label = "threads a block", kind = "count", floor = 1, rank = 1.8},
  {column = "ctr_registers", label = "registers", kind = "count", floor = 1, rank = 9},
  {column = "ctr_shared_bytes", label = "shared memory bytes", kind = "count", floor = 1, rank = 9},
  {column = "ctr_shared_wavefronts_per_request", label = "shared wavefronts per request", kind = "relative", floor = 5,
    unit = "", cause = "bank conflicts", rank = 2.5, per = "ctr_shared_requests"},
  {column = "ctr_load_sectors_per_request", label = "sectors per global load", kind = "relative", floor = 5, unit = "",
    cause = "coalescing", rank = 2.5, per = "ctr_load_requests"},
  {column = "ctr_store_sectors_per_request", label = "sectors per global store", kind = "relative", floor = 5, unit = "",
    cause = "coalescing", rank = 2.5, per = "ctr_store_requests"},
  {column = "ctr_lanes_per_instruction", label = "active lanes per instruction", kind = "relative", floor = 5, unit = "",
    cause = "divergence", rank = 2.5},
  {column = "ctr_atomic_requests", label = "atomic requests at the L2", kind = "relative", floor = 5, unit = "",
    cause = "atomics", rank = 2.5, requests = true},
  {column = "ctr_tensor_pct", label = "tensor pipe active", kind = "points", floor = 5, unit = "%", rank = 2.5},
  {column = "ctr_fp64_pct", label = "FP64 pipe active", kind = "points", floor = 5, unit = "%",
    cause = "FP64 arithmetic", rank = 2.5},
  {column = "ctr_instructions", label = "instructions", kind = "relative", floor = 1, work = true},
  {column = "ctr_dram_bytes", label = "DRAM bytes", kind = "relative", floor = 2, traffic = 1, bytes = true},
  {column = "ctr_l2_bytes", label = "L2 bytes", kind = "relative", floor = 2, traffic = 2, bytes = true},
  {column = "ctr_l2_hit_pct", label = "L2 hit rate", kind = "points", floor = 5, unit = "%", traffic = 3,
    misses_of = "ctr_l2_bytes"},
  {column = "ctr_l1_hit_pct", label = "L1 hit rate", kind = "points", floor = 5, unit = "%", traffic = 4},
  {column = "ctr_stall_cycles", label = "warp cycles per issued instruction", kind = "relative", floor = 10, unit = "",
    rank = 6},
  {column = "ctr_occupancy_pct", label = "achieved occupancy", kind = "points", floor = 5, unit = "%", rank = 7},
  {column = "ctr_sm_active_pct", label = "SMs active", kind = "points", floor = 10, unit = "%", rank = 7},
  {column = "sm_clock_mhz", label = "SM clock", kind = "relative", floor = 2, unit = " MHz", rank = 7},
}
M.STALL = "ctr_stall" -- the dominant stall reason (text)
-- stalls of warps waiting on memory: then a change of bytes explains more than one of instructions
local MEMORY_STALLS = {long_scoreboard = true, lg_throttle = true, drain = true, imc_miss = true}
local time_inside_noise -- (below)

-- a counter's value that can be compared (a NaN or an infinity from a broken collection cannot)
local function finite(value) return type(value) == "number" and value == value and math.abs(value) ~= math.huge end

local function numbers_of(rows, column)
  local values = {}
  for _, row in ipairs(rows) do
    if finite(row[column]) then values[#values + 1] = row[column] end
  end
  return values
end

-- The spread of values around their median in the counter's own terms: percent of the median for
-- a relative counter, points for the rest (the second largest deviation, as rule.spread).
local function spread_of(counter, values, base)
  if counter.kind == "relative" then return base ~= 0 and rule.spread(values, base) or 0 end
  local deviations = {}
  for i, v in ipairs(values) do deviations[i] = math.abs(v - base) end
  table.sort(deviations)
  if #deviations >= 4 then table.remove(deviations) end
  return deviations[#deviations] or 0
end

-- The values that are the counter's noise: those within six median absolute deviations (and four times
-- the floor) of their median. A night of a regression, or of a change since accepted, is not the
-- counter's noise: with it, the spread and the range would hide the next change of its size.
local function noise_values(counter, values)
  local center = rule.median(values)
  if not center then return values end
  local function deviation(v)
    if counter.kind == "relative" then return center ~= 0 and math.abs(v - center) / math.abs(center) * 100 or math.abs(v) end
    return math.abs(v - center)
  end
  local deviations = {}
  for i, v in ipairs(values) do deviations[i] = deviation(v) end
  local limit = math.max(4 * counter.floor, 6 * rule.median(deviations))
  local kept = {}
  for _, v in ipairs(values) do if deviation(v) <= limit then kept[#kept + 1] = v end end
  return kept
end

local function number(value, unit)
  local text = math.type(value) == "integer" and tostring(value)
    or string.format(unit == "%" and "%.1f" or "%.4g", value)
  return text .. (unit or "")
end

-- The most frequent value of a text column over rows, or nil.
local function usual_text(rows, column)
  local counts, usual, most = {}, nil, 0
  for _, row in ipairs(rows) do
    local v = row[column]
    if type(v) == "string" and v ~= "" then counts[v] = (counts[v] or 0) + 1 end
  end
  for value, count in pairs(counts) do
    if count > most or (count == most and value < usual) then usual, most = value, count end
  end
  return usual
end

-- new / base - 1, in percent (0 when either is missing; a rise from 0 is unbounded)
local function growth(base, new)
  if type(base) ~= "number" or type(new) ~= "number" then return 0 end
  if base == 0 then return new > 0 and math.huge or 0 end
  return (new / base - 1) * 100
end

-- The effect of each moved counter (percent of time it can account for, by the model above).
-- b and n: the baseline medians and the new values by column; moved: the moved counters by column.
local function effects(b, n, moved, change_pct)
  local effect = {}
  effect.ctr_instructions = growth(b.ctr_instructions, n.ctr_instructions)
  effect.ctr_dram_bytes = growth(b.ctr_dram_bytes, n.ctr_dram_bytes)
  effect.ctr_l2_bytes = growth(b.ctr_l2_bytes, n.ctr_l2_bytes)
  -- the warp cycles: instructions x cycles per issued instruction (the time at the same warps and clock)
  local function warp_cycles(row) return row.ctr_stall_cycles and row.ctr_instructions and row.ctr_stall_cycles * row.ctr_instructions end
  effect.ctr_stall_cycles = warp_cycles(b) and warp_cycles(n) and growth(warp_cycles(b), warp_cycles(n))
    or growth(b.ctr_stall_cycles, n.ctr_stall_cycles)
  for _, column in ipairs({"ctr_l2_hit_pct", "ctr_l1_hit_pct"}) do
    if b[column] and n[column] then effect[column] = growth(100 - b[column], 100 - n[column]) end
  end
  effect.ctr_occupancy_pct = growth(n.ctr_occupancy_pct, b.ctr_occupancy_pct)
  effect.ctr_sm_active_pct = growth(n.ctr_sm_active_pct, b.ctr_sm_active_pct)
  effect.sm_clock_mhz = growth(n.sm_clock_mhz, b.sm_clock_mhz)
  effect.ctr_lanes_per_instruction = growth(n.ctr_lanes_per_instruction, b.ctr_lanes_per_instruction)
  -- the totals the per-request ratios make with their requests (the ratio alone when they are missing)
  local function total(row, ratio, requests) return (row[ratio] or 0) * (row[requests] or 1) end
  effect.ctr_shared_wavefronts_per_request = growth(total(b, "ctr_shared_wavefronts_per_request", "ctr_shared_requests"),
    total(n, "ctr_shared_wavefronts_per_request", "ctr_shared_requests"))
  local function sectors(row)
    return total(row, "ctr_load_sectors_per_request", "ctr_load_requests") + total(row, "ctr_store_sectors_per_request",
      "ctr_store_requests")
  end
  effect.ctr_load_sectors_per_request = growth(sectors(b), sectors(n))
  effect.ctr_store_sectors_per_request = effect.ctr_load_sectors_per_request
  for _, column in ipairs({"ctr_registers", "ctr_shared_bytes"}) do
    effect[column] = moved.ctr_occupancy_pct and effect.ctr_occupancy_pct or 0
  end
  effect.ctr_spill_bytes = math.max(effect.ctr_instructions, effect.ctr_l2_bytes, effect.ctr_stall_cycles)
  effect.ctr_stack_bytes = effect.ctr_spill_bytes
  effect.ctr_local_requests = effect.ctr_spill_bytes
  -- the launch: fewer SMs given a block, the warps an SM holds, or the waves rounded up (the largest)
  local busy = growth(n.ctr_sms_busy_pct, b.ctr_sms_busy_pct)
  local function wave_times(waves) return finite(waves) and waves > 0 and math.ceil(waves) / waves or nil end
  local rounded = wave_times(b.ctr_waves) and wave_times(n.ctr_waves) and growth(wave_times(b.ctr_waves),
    wave_times(n.ctr_waves)) or 0
  local launch = math.max(busy, rounded, moved.ctr_occupancy_pct and effect.ctr_occupancy_pct or 0,
    moved.ctr_sm_active_pct and effect.ctr_sm_active_pct or 0)
  effect.ctr_blocks, effect.ctr_block_threads = launch, launch
  -- atomics: the waits they add where the stall cycles are known, else their own ratio
  effect.ctr_atomic_requests = n.ctr_stall_cycles and b.ctr_stall_cycles and effect.ctr_stall_cycles
    or growth(b.ctr_atomic_requests, n.ctr_atomic_requests)
  -- the tensor pipe's work is its activity times the time; a path that left it did its math elsewhere
  if b.ctr_tensor_pct and n.ctr_tensor_pct and b.ctr_tensor_pct > 0 then
    local work_ratio = n.ctr_tensor_pct * (1 + (change_pct or 0) / 100) / b.ctr_tensor_pct
    effect.ctr_tensor_pct = work_ratio <= 0.5 and effect.ctr_instructions or 0
  end
  -- the FP64 pipe's work (activity x time) now, less before, in base times
  if b.ctr_fp64_pct and n.ctr_fp64_pct then
    effect.ctr_fp64_pct = n.ctr_fp64_pct * (1 + (change_pct or 0) / 100) - b.ctr_fp64_pct
  end
  return effect
end

-- Whether a change of the counter is too small in absolute terms to be evidence (counts near zero):
-- bytes under the rate floor over the kernel's time, requests (or the requests a ratio is per)
-- under the share floor of the warp instructions.
local function below_counts_floor(counter, base, new, base_row, new_row, time_ms)
  local bytes_floor = time_ms and time_ms > 0 and M.BYTES_FLOOR_GBPS * 1e6 * time_ms -- GB/s x ms = 1e6 bytes
  if counter.bytes and bytes_floor then return math.abs(new - base) < bytes_floor end
  if counter.misses_of and bytes_floor then
    -- a hit rate matters through the misses it makes: the traffic it sends one level down
    local traffic = math.max(finite(base_row[counter.misses_of]) and base_row[counter.misses_of] or 0,
      finite(new_row[counter.misses_of]) and new_row[counter.misses_of] or 0)
    return math.abs(new - base) / 100 * traffic < bytes_floor
  end
  local instructions = math.max(finite(base_row.ctr_instructions) and base_row.ctr_instructions or 0,
    finite(new_row.ctr_instructions) and new_row.ctr_instructions or 0)
  if instructions <= 0 then return false end
  local floor = M.REQUEST_SHARE * instructions
  if counter.requests then return math.abs(new - base) < floor end
  if counter.per then
    local before, after = base_row[counter.per], new_row[counter.per]
    return not (finite(before) and finite(after)) or math.min(before, after) < floor
  end
  return false
end

-- A counter's change as a finding's text, or nil when it is inside the noise. values: the nights
-- that are its noise; base: the baseline median; new: this night's value.
local function change_text(counter, base, new, values, change_pct)
  local delta = new - base
  -- the noise guard: a counter may move by its floor each night, so two nights can differ by
  -- twice it; past that, by three times the spread its recent nights showed
  local noise = math.max(2 * counter.floor, M.NOISE_SPREADS * spread_of(counter, values, rule.median(values)))
  -- and past every one of those nights by the floor: a new value inside what they already did
  -- is no change, however tight the others were
  local low, high = stats.range(values)
  local margin = counter.kind == "relative" and math.abs(base) * counter.floor / 100 or counter.floor
  local outside = counter.kind == "count" or new >= high + margin or new <= low - margin
  if not outside then return nil end
  if counter.kind ~= "relative" then
    if math.abs(delta) < (counter.kind == "points" and noise or counter.floor) then return nil end
    local text = string.format("%s %s -> %s", counter.label, number(base, counter.unit), number(new, counter.unit))
    if counter.cause then text = text .. " (" .. counter.cause .. ")" end
    return text
  end
  local pct = base ~= 0 and delta / base * 100 or (delta ~= 0 and math.huge or 0)
  if math.abs(pct) < noise then return nil end
  -- a ratio reads best as its two values, a total as its change, a clock as both
  local text
  if counter.unit == "" then
    text = string.format("%s %s -> %s", counter.label, number(base), number(new))
  elseif counter.unit then
    text = string.format("%s %+.1f%% (%s -> %s)", counter.label, pct, number(base, counter.unit),
      number(new, counter.unit))
  else
    text = string.format("%s %+.1f%%", counter.label, pct)
  end
  if counter.cause then text = text .. " (" .. counter.cause .. ")" end
  if counter.work and change_pct then text = text .. string.format(" (the time moved %+.1f%%)", change_pct) end
  return text
end

-- Where a change of the counter goes in the explanation: the work and the traffic by what the
-- kernel waits on (bytes first for a kernel waiting on memory), the rest by the counter's rank.
local function rank_of(counter, memory_bound)
  if counter.work then return memory_bound and 5 or 3 end
  if counter.traffic then return (memory_bound and 3 or 5) + counter.traffic / 10 end
  return counter.rank
end

-- Every counter of new_row against its baseline: the changes found ({text, rank, column}), the same
-- by column (moved), the baseline medians (b) and new values (n) of the counters compared, how many
-- did not move, and whether any counter was there to compare.
local function compare_counters(base_rows, new_row, noise_rows, change_pct, memory_bound, time_ms)
  local c = {found = {}, moved = {}, b = {}, n = {}, unchanged = 0, present = false}
  -- the baseline's row of medians, for the floors that read another column
  local base_row = {}
  for _, column in ipairs({"ctr_instructions", "ctr_load_requests", "ctr_store_requests", "ctr_shared_requests",
    "ctr_l2_bytes"}) do
    base_row[column] = rule.median(numbers_of(base_rows, column))
  end
  for _, column in ipairs({"ctr_sms_busy_pct", "ctr_waves", "ctr_load_requests", "ctr_store_requests",
    "ctr_shared_requests"}) do
    c.b[column] = rule.median(numbers_of(base_rows, column))
    c.n[column] = finite(new_row[column]) and new_row[column] or nil
  end
  for _, counter in ipairs(M.COUNTERS) do
    local new = new_row[counter.column]
    local base = rule.median(numbers_of(base_rows, counter.column))
    local values = numbers_of(noise_rows, counter.column)
    if #values == 0 then values = numbers_of(base_rows, counter.column) end
    values = noise_values(counter, values)
    if finite(new) and base then
      c.b[counter.column], c.n[counter.column] = base, new
      c.present = true
      local text = not below_counts_floor(counter, base, new, base_row, new_row, time_ms) and
        change_text(counter, base, new, values, change_pct)
      if text then
        c.found[#c.found + 1] = {text = text, rank = rank_of(counter, memory_bound), column = counter.column}
        c.moved[counter.column] = c.found[#c.found]
      else
        c.unchanged = c.unchanged + 1
      end
    end
  end
  return c
end

-- The stall reasons whose share of the warp cycles moved most (at least STALL_SHARE_FLOOR points),
-- as "barrier 2% -> 26%": those that grew first (what the warps now wait on), the largest moves
-- first (three at most).
-- (the reasons are the row's ctr_stall_REASON_pct columns: api/counters.lua says which are kept)
local function stall_shares(base_rows, new_row)
  local moves = {}
  for column, new in pairs(new_row) do
    local reason = type(column) == "string" and column:match("^ctr_stall_(.+)_pct$")
    local base = reason and rule.median(numbers_of(base_rows, column))
    if base and finite(new) and math.abs(new - base) >= M.STALL_SHARE_FLOOR then
      moves[#moves + 1] = {text = string.format("%s %.0f%% -> %.0f%%", reason, base, new), size = math.abs(new - base),
        grew = new > base}
    end
  end
  table.sort(moves, function(x, y)
    if x.grew ~= y.grew then return x.grew end
    return x.size > y.size or (x.size == y.size and x.text < y.text)
  end)
  local parts = {}
  for i = 1, math.min(3, #moves) do parts[i] = moves[i].text end
  return parts
end

-- The launch's shape of a row as words: "66 blocks of 256 threads (0.06 waves, 50% of the SMs given a block)".
local function shape_text(row)
  local text = string.format("%s blocks of %s threads", number(row.ctr_blocks or 0), number(row.ctr_block_threads or 0))
  local parts = {}
  if finite(row.ctr_waves) then parts[#parts + 1] = string.format("%.2g waves", row.ctr_waves) end
  if finite(row.ctr_sms_busy_pct) then parts[#parts + 1] = string.format("%.0f%% of the SMs given a block", row.ctr_sms_busy_pct) end
  return #parts > 0 and (text .. " (" .. table.concat(parts, ", ") .. ")") or text
end

-- The telltales whose accesses make warps wait, with the stall reasons those waits are (in the
-- order tried: the first that moved takes the warp cycles): more sectors per request wait on memory
-- (long_scoreboard for loads, lg_throttle for the queue of requests), more wavefronts per shared
-- request on the shared-memory pipe (mio_throttle, short_scoreboard).
local WAITS_OF = {
  {column = "ctr_load_sectors_per_request", stalls = {"long_scoreboard", "lg_throttle"}},
  {column = "ctr_store_sectors_per_request", stalls = {"long_scoreboard", "lg_throttle"}},
  {column = "ctr_shared_wavefronts_per_request", stalls = {"mio_throttle", "short_scoreboard"}},
}

-- How many points the stall reasons' shares (of the warp cycles) grew together, new against the
-- baseline's median.
local function stall_growth(base_rows, new_row, reasons)
  local grown = 0
  for _, reason in ipairs(reasons) do
    local column = "ctr_stall_" .. reason .. "_pct"
    local base, new = rule.median(numbers_of(base_rows, column)), new_row[column]
    if base and finite(new) then grown = grown + new - base end
  end
  return grown
end

-- Changes that are one story become one finding: registers (or shared memory) that cost
-- occupancy, a tensor path that left with the instructions that replaced it, a new launch shape
-- with the occupancy and SMs it moved, local memory's stack frame with its requests, and the warp
-- cycles per instruction with the stall reasons whose shares moved.
local function join_causes(c, effect, base_rows, new_row)
  local moved = c.moved
  local occupancy = moved.ctr_occupancy_pct
  local blocks, threads = moved.ctr_blocks, moved.ctr_block_threads
  if blocks or threads then
    local shape = blocks or threads
    shape.text = string.format("launch shape %s -> %s", shape_text({ctr_blocks = c.b.ctr_blocks,
      ctr_block_threads = c.b.ctr_block_threads, ctr_waves = c.b.ctr_waves, ctr_sms_busy_pct = c.b.ctr_sms_busy_pct}),
      shape_text(new_row))
    if blocks and threads then threads.rank = nil end
    for _, column in ipairs({"ctr_occupancy_pct", "ctr_sm_active_pct"}) do
      local symptom = moved[column]
      if symptom and symptom.rank and effect[shape.column] > 0 then
        shape.text, symptom.rank = shape.text .. (shape.joined and ", " or ": ") .. symptom.text, nil
        shape.joined = true
      end
    end
  end
  -- (after the telltales of the work or traffic per access, 2.5: occupancy moves the time only
  -- through the latency it hides, and registers that rose with a change of the code are often the
  -- other change's companion)
  for _, column in ipairs({"ctr_registers", "ctr_shared_bytes"}) do
    local resource = moved[column]
    if resource and occupancy and occupancy.rank and effect[column] > 0 then
      resource.text, resource.rank = resource.text .. ": " .. occupancy.text, 2.6
      occupancy.rank = nil
    end
  end
  local stack, requests = moved.ctr_stack_bytes, moved.ctr_local_requests
  if stack and requests then
    stack.text, requests.rank = "local memory: " .. stack.text .. ", " .. requests.text:gsub(" %(local memory%)$", ""), nil
  end
  local tensor = moved.ctr_tensor_pct
  if tensor and (effect.ctr_tensor_pct or 0) > 0 then
    tensor.text = tensor.text .. " (the tensor-core path replaced"
      .. (moved.ctr_instructions and string.format(": instructions %+.0f%%)", effect.ctr_instructions) or ")")
  end
  local cycles = moved.ctr_stall_cycles
  if cycles then
    local shares = stall_shares(base_rows, new_row)
    if #shares > 0 then cycles.text = cycles.text .. " (stalls: " .. table.concat(shares, ", ") .. ")" end
    cycles.stalls = true
    -- the waits that grew are a telltale's: it is their cause, and takes their effect
    for _, cause in ipairs(WAITS_OF) do
      local telltale = moved[cause.column]
      if telltale and telltale.rank and cycles.rank and stall_growth(base_rows, new_row, cause.stalls) >= M.STALL_SHARE_FLOOR then
        telltale.text, cycles.rank = telltale.text .. ": " .. cycles.text, nil
        effect[cause.column] = math.max(effect[cause.column] or 0, effect.ctr_stall_cycles or 0)
      end
    end
  end
end

-- Marks each change whose effect accounts for change_pct, and puts them in the explanation's order:
-- those that account (and the symptoms) first, then by rank, then as found. Returns whether any accounts.
local function order_by_account(found, effect, change_pct, still)
  local needed = M.ACCOUNT_SHARE * math.max(change_pct or 0, 0)
  local accounting = false
  for n_found, f in ipairs(found) do
    f.n = n_found
    if not f.symptom and f.rank then
      -- (a time that did not rise, or rose inside its noise, has nothing a change could account for)
      f.accounts = not still and (change_pct or 0) > 0 and (effect[f.column] or 0) >= needed and (effect[f.column] or 0) > 0
      accounting = accounting or f.accounts
    end
  end
  local function key(f) return (f.symptom or f.accounts) and 0 or 1 end
  table.sort(found, function(x, y)
    if key(x) ~= key(y) then return key(x) < key(y) end
    return (x.rank or 99) < (y.rank or 99) or ((x.rank or 99) == (y.rank or 99) and x.n < y.n)
  end)
  return accounting
end

-- Whether the point's time is inside its own night-to-night noise, by the guard a counter's change
-- passes (the time as a relative counter with no floor): inside the noise nights' range, or within
-- NOISE_SPREADS spreads of their median; then its words (", the time inside its nights' noise
-- (...)"), else nil. A time that fell is not a rise either. (Only with at least 3 noise nights
-- whose times are known: fewer cannot bound the noise, and a young history's change is judged by
-- the rule alone.)
local TIME = {kind = "relative", floor = 0}
time_inside_noise = function(noise_rows, base_rows, new_row, change_pct)
  if change_pct and change_pct <= 0 then return string.format(": the time did not rise") end
  local values = numbers_of(#noise_rows >= #base_rows and noise_rows or base_rows, "median_ms")
  local new = new_row.median_ms
  if #values < 3 or not finite(new) then return nil end
  values = noise_values(TIME, values)
  local low, high = stats.range(values)
  local center = rule.median(values)
  local spread = rule.spread(values, center)
  local rise = center > 0 and (new / center - 1) * 100 or 0
  if new <= high or rise <= M.NOISE_SPREADS * spread then
    return string.format(": the time is inside its nights' noise (%.4g to %.4g ms, spread %.2f%%)", low, high, spread)
  end
  return nil
end

-- explain(base_rows, new_row, change_pct, noise_rows, time_ms) -> the findings (strings, most
-- telling first) and whether a named change accounts for change_pct, or nil when the point has no
-- counters. The level is the median of base_rows; the noise (spread and range) is that of
-- noise_rows (the point's longer history, base_rows included; base_rows when none); time_ms (else
-- the row's median_ms) sets the bytes' floor. Order: the changes that account, by rank (spills;
-- local memory; the launch shape; registers or shared memory that moved occupancy; bank conflicts,
-- coalescing, divergence, atomics, the tensor and FP64 pipes; then the work and the traffic, bytes
-- first for a kernel waiting on memory, instructions first for the rest; the warp cycles per
-- instruction; occupancy, SMs active and the clock); then the dominant stall; then the changes
-- that do not account, marked.
function M.explain(base_rows, new_row, change_pct, noise_rows, time_ms)
  noise_rows = noise_rows or base_rows
  time_ms = time_ms or (finite(new_row.median_ms) and new_row.median_ms or nil)
  local stall, usual = new_row[M.STALL], usual_text(base_rows, M.STALL)
  local memory_bound = MEMORY_STALLS[type(stall) == "string" and stall or ""] or MEMORY_STALLS[usual or ""]
  local c = compare_counters(base_rows, new_row, noise_rows, change_pct, memory_bound, time_ms)
  local found = c.found
  if type(stall) == "string" and stall ~= "" and usual then
    c.present = true
    -- (said within the warp cycles' finding when those moved)
    if stall ~= usual and not c.moved.ctr_stall_cycles then
      found[#found + 1] = {text = string.format("dominant stall %s -> %s", usual, stall), rank = 8, symptom = true}
    end
  end
  if not c.present then return nil end
  local effect = effects(c.b, c.n, c.moved, change_pct)
  join_causes(c, effect, base_rows, new_row)
  local still = time_inside_noise(noise_rows, base_rows, new_row, change_pct)
  local accounting = order_by_account(found, effect, change_pct, still)
  local findings = {}
  if #found > 0 and not accounting then
    findings[1] = string.format("nothing the counters see accounts for %+.1f%%%s", change_pct or 0, still or "")
  end
  for _, f in ipairs(found) do
    if f.rank then findings[#findings + 1] = f.text .. ((f.symptom or f.accounts) and "" or M.INCIDENTAL) end
  end
  if #findings == 0 then
    findings[1] = string.format("counters unchanged (%d compared): the time moved %+.1f%% alone; look at the clocks " ..
      "or the machine", c.unchanged, change_pct or 0)
  end
  return findings, accounting
end

-- The runs whose counters tell the points of run_id their noise when the judge named none: its
-- sweep's last NOISE_NIGHTS nights (five nights alone cannot bound it:
-- docs/explanation/what-changed.md).
function M.noise_runs(db, run_id)
  local runs = {}
  for i, id in ipairs(history.baseline_ids(db, run_id, M.NOISE_NIGHTS)) do runs[i] = history.load_run(db, id) end
  return runs
end

-- The runs whose counters tell an entry's point its noise: the last NOISE_NIGHTS of the point's
-- baseline nights its judge named (e.noise_ids, judge/verdict.lua: never a night of an open
-- regression, nor a night of the creep being explained), each loaded by load(id); nil when the
-- judge named none. The nightly and the site read the same.
function M.noise_of(e, load)
  local ids = e.noise_ids
  if not ids then return nil end
  local runs = {}
  for i = math.max(1, #ids - M.NOISE_NIGHTS + 1), #ids do runs[#runs + 1] = load(ids[i]) end
  return runs
end

-- Where a night's confirm stage writes the diagnoses of an experiment's regressions that nothing
-- accounts for (gpuexp --diagnose's CSV; not recorded in the history), under the night's folder.
function M.diagnoses_path(night_dir, experiment)
  return string.format("%s/confirm/%s.diagnose.csv", night_dir, experiment)
end

-- The text of a diagnosis (a row's diagnosis and diagnosis_evidence columns, as gpuexp --diagnose
-- writes them), attached to an explanation that nothing accounts for, or nil.
function M.diagnosis_text(row)
  if not row or type(row.diagnosis) ~= "string" or row.diagnosis == "" then return nil end
  local evidence = type(row.diagnosis_evidence) == "string" and row.diagnosis_evidence ~= "" and
    (": " .. row.diagnosis_evidence) or ""
  return "gpuexp diagnose says " .. row.diagnosis:upper() .. evidence
end

M.OPEN_NOTE = "(open since an earlier night: gpuexp diagnose runs on the night a regression is confirmed)"

-- An explanation (text, and whether a change accounts for the time) of a regressed entry e of run,
-- with the diagnosis of e's point among rows (a diagnose CSV) when nothing accounts, or the note
-- that an open regression was diagnosed on the night it was confirmed. The text, and whether the
-- diagnosis was found.
function M.with_diagnosis(e, run, text, accounted, rows)
  if not text or accounted ~= false then return text, false end
  if e.open then return text .. "; " .. M.OPEN_NOTE, false end
  for _, row in ipairs(rows or {}) do
    local same = true
    for a, axis in ipairs(run.axes) do
      same = same and csv.format_value(row[axis]) == tostring(run:axis_cells(e.key)[a])
    end
    local diagnosis = same and M.diagnosis_text(row)
    if diagnosis then return text .. "; " .. diagnosis, true end
  end
  return text, false
end

-- The explanation of a regressed entry of a comparison, as one line, and whether a change it names
-- accounts for the time, or nil: base_runs, new_run and noise_runs (the point's longer history,
-- optional) are results (store/result.lua) holding the point's rows.
function M.entry(e, base_runs, new_run, noise_runs)
  local new_row = new_run:row(e.key)
  if not new_row then return nil end
  local function ok_rows(runs)
    local rows = {}
    for _, run in ipairs(runs or {}) do
      local row = run:row(e.key)
      if row and (row.status == nil or row.status == "ok") then rows[#rows + 1] = row end
    end
    return rows
  end
  local base_rows = ok_rows(base_runs)
  if #base_rows == 0 then return nil end
  local noise_rows = ok_rows(noise_runs)
  local findings, accounted = M.explain(base_rows, new_row, e.change_pct, #noise_rows > #base_rows and noise_rows or nil)
  if not findings then return nil end
  return table.concat(findings, "; "), accounted
end

-- The explanation of a slower regression e of a recorded night (run, from db) as its nightly gave
-- it: the counters against e's baselines with the noise of the point's baseline nights, and when
-- nothing accounts, the diagnosis its confirm stage wrote in the night's folder. read: a table
-- kept for the night's other points (what was loaded once).
function M.recorded(db, e, run, read)
  read.runs = read.runs or {}
  local function load(id)
    read.runs[id] = read.runs[id] or history.load_run(db, id)
    return read.runs[id]
  end
  local noise = M.noise_of(e, load)
  if not noise then
    read.noise = read.noise or M.noise_runs(db, run.record.id)
    noise = read.noise
  end
  local text, accounted = M.entry(e, e.base_runs or {}, run, noise)
  local output = run.info and run.info.sweep and run.info.sweep.output
  if read.diagnoses == nil and accounted == false and output then
    local readable, rows = pcall(csv.read, M.diagnoses_path(output:match("^(.*)/[^/]*$") or ".", run.record.experiment))
    read.diagnoses = readable and rows or false
  end
  return (M.with_diagnosis(e, run, text, accounted, read.diagnoses or nil))
end

return M
