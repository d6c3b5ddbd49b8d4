-- The values of the run options that are more than a type: --shard (and Slurm job arrays),
-- --point-timeout, --only and --devices. Each parser returns the value, or nil and why. The command
-- line's parser (engine/args.lua) reads --shard, --point-timeout and --only with them (their catalog
-- types), once: the run's engine gets the typed values.
local M = {}

local MAX_SHARDS = 1 << 30

-- A typed value that reads as the text it was typed from ("--only '" .. only .. "'", a shard in a
-- message): tostring and .. give that text.
local typed_text = {
  __tostring = function(value) return getmetatable(value).text[value] end,
  __concat = function(a, b) return tostring(a) .. tostring(b) end,
}
typed_text.text = setmetatable({}, {__mode = "k"})
local function as_typed(value, text)
  typed_text.text[value] = text
  return setmetatable(value, typed_text)
end

-- "I/N" (0-based I) -> {index, count}, or nil and why.
function M.parse_shard(text)
  local i, n = tostring(text):match("^(%d+)/(%d+)$")
  i, n = math.tointeger(tonumber(i)), math.tointeger(tonumber(n))
  if i and n and n > MAX_SHARDS then
    return nil, string.format("--shard takes I/N with N at most %d, got '%s'", MAX_SHARDS, tostring(text))
  end
  if not i or not n or n < 1 or i >= n then
    return nil, "--shard takes I/N with 0 <= I < N (e.g. 0/4), got '" .. tostring(text) .. "'"
  end
  return as_typed({index = i, count = n}, tostring(text))
end

-- A Slurm or Kubernetes variable as a whole number, or nil and why.
local function environment_integer(name, required)
  local text = os.getenv(name)
  if text == nil or text == "" then
    if required then return nil, name .. " is not set" end
    return nil
  end
  local value = math.tointeger(tonumber(text))
  if not value then return nil, string.format("%s='%s' is not a whole number", name, text) end
  return value
end

-- The shard from a Kubernetes Indexed Job: JOB_COMPLETION_INDEX (set by Kubernetes) of
-- JOB_COMPLETIONS (the Job's spec.completions, which the manifest passes: Kubernetes does not).
local function kubernetes_shard()
  local index, why = environment_integer("JOB_COMPLETION_INDEX", true)
  if not index then
    return nil, "a Kubernetes Indexed Job: " .. why .. " (Kubernetes sets it to the pod's index, 0 to completions - 1; " ..
      "unset it, or give --shard I/N)"
  end
  local count, why_count = environment_integer("JOB_COMPLETIONS", true)
  if not count then
    return nil, "a Kubernetes Indexed Job: " .. why_count .. " (set JOB_COMPLETIONS to the Job's " ..
      "completions in its manifest, as experiments/kubernetes/sweep-job.yaml does, or give --shard I/N)"
  end
  if count < 1 then
    return nil, string.format("a Kubernetes Indexed Job: JOB_COMPLETIONS=%d is not a number of completions (1 or " ..
      "more: the Job's spec.completions); give --shard I/N", count)
  end
  if index < 0 or index >= count then
    return nil, string.format("a Kubernetes Indexed Job: JOB_COMPLETION_INDEX=%d is outside 0..%d of its %d " ..
      "completions; give --shard I/N", index, count - 1, count)
  end
  return M.parse_shard(string.format("%d/%d", index, count))
end

-- The shard: --shard's (typed already), else from a Slurm job array: task (SLURM_ARRAY_TASK_ID - _MIN) / _STEP
-- of _COUNT tasks (--array=0-6:2 runs tasks 0, 2, 4 and 6: shares 0 to 3 of 4), else from a
-- Kubernetes Indexed Job (JOB_COMPLETION_INDEX of JOB_COMPLETIONS).
function M.shard_from(option)
  if option then return option end
  if not os.getenv("SLURM_ARRAY_TASK_ID") then
    if os.getenv("JOB_COMPLETION_INDEX") then return kubernetes_shard() end
    return nil
  end
  local id, why = environment_integer("SLURM_ARRAY_TASK_ID", true)
  local count, why_count = environment_integer("SLURM_ARRAY_TASK_COUNT", true)
  local first = environment_integer("SLURM_ARRAY_TASK_MIN") or 0
  local step = environment_integer("SLURM_ARRAY_TASK_STEP") or 1
  if not id or not count then
    return nil, "a Slurm job array: " .. (why or why_count) .. " (or give --shard I/N)"
  end
  if step < 1 or (id - first) % step ~= 0 then
    return nil, string.format("a Slurm job array: task %d is not on the array's step (min %d, step %d); give --shard I/N",
      id, first, step)
  end
  local index = (id - first) // step
  if index < 0 or index >= count then
    return nil, string.format("a Slurm job array: task %d (min %d, step %d) is share %d, outside 0..%d of its %d tasks; " ..
      "give --shard I/N", id, first, step, index, count - 1, count)
  end
  return M.parse_shard(string.format("%d/%d", index, count))
end

-- --point-timeout S -> seconds (0: no limit), or nil and why. Very small limits are raised to a
-- millisecond, very large ones mean no limit. (Its default is the catalog's.)
function M.parse_point_timeout(text)
  local seconds = tonumber(text)
  if not seconds or seconds ~= seconds or seconds < 0 or seconds == math.huge then
    return nil, "--point-timeout takes seconds >= 0 (0: no limit), got '" .. tostring(text) .. "'"
  end
  if seconds >= 1e9 then return 0 end
  if seconds > 0 and seconds < 0.001 then return 0.001 end
  return seconds
end

-- "a=1,b=2;a=3" -> list of clauses ({axis = value text}), or nil and why. A point runs when it
-- matches every axis of one clause.
function M.parse_only(text)
  local clauses = {}
  for clause_text in (text .. ";"):gmatch("([^;]*);") do
    if clause_text:match("%S") then
      local clause, count = {}, 0
      for item in clause_text:gmatch("[^,]+") do
        local name, value = item:match("^%s*([^=]-)%s*=%s*(.-)%s*$")
        if not name or name == "" then
          return nil, "--only takes axis=value pairs (a=1,b=2;a=3), got '" .. item .. "'"
        end
        clause[name] = value
        count = count + 1
      end
      if count > 0 then clauses[#clauses + 1] = clause end
    end
  end
  if #clauses == 0 then return nil, "--only names no point" end
  return as_typed(clauses, text)
end

-- "0,1,3" or "all" -> list of ordinals, or nil and why.
function M.parse_devices(text)
  if text == "all" then
    local ok, count = pcall(gpuexp.device_count)
    if not ok or count == 0 then return nil, "--devices all: no GPU found" end
    local list = {}
    for i = 0, count - 1 do list[#list + 1] = i end
    return list
  end
  local list, seen = {}, {}
  for item in tostring(text):gmatch("[^,]+") do
    local n = tonumber(item)
    if not n or math.type(n) ~= "integer" or n < 0 then return nil, "--devices takes GPU numbers like 0,1,3 or all, got '" .. text .. "'" end
    if seen[n] then return nil, "--devices names GPU " .. n .. " twice" end
    seen[n] = true
    list[#list + 1] = n
  end
  if #list == 0 then return nil, "--devices needs at least one GPU" end
  return list
end

-- The night a run belongs to (gpuexp nightly's --night options): {id, kind, suite, experiment},
-- or nil for a run of its own.
function M.night_of(run_options)
  if not run_options.night then return nil end
  return {id = run_options.night, kind = run_options.night_kind or "nightly", suite = run_options.night_suite,
    experiment = run_options.night_experiment}
end

return M
