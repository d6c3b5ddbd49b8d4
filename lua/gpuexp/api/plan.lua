-- Offline plans (gpuexp --arch sm_XX, or no GPU found): a device made of the architecture's
-- limits and buffers with a size but no memory, so the same script runs in both modes.
-- Kernels compile for the architecture, launches are checked but not run, and timings are empty.
local M = {}


local Planned = {}
local function no_data()
  gpuexp.error("usage", "no data: this buffer belongs to an offline plan (nothing runs on a GPU)", 3)
end
local planned_methods = {
  fill = function(self) return self end,
  random = function(self) return self end,
  copy_from = function(self) return self end,
  free = function() end,
  -- (called, not tail-called, so that the error names the script's line)
  get = function() no_data() end, set = function() no_data() end,
  to_table = function() no_data() end, compare = function() no_data() end,
  time_copy_from = function() return {samples = 0} end,
}
planned_methods.write = function(self, data, offset)
  if type(data) ~= "string" then gpuexp.error("usage", "write: expected a string of bytes", 2) end
  if (offset or 0) < 0 or (offset or 0) + #data > rawget(self, "bytes") then
    gpuexp.error("usage", string.format("write: %d bytes at offset %d do not fit in %d bytes", #data, offset or 0,
      rawget(self, "bytes")), 2)
  end
  return self
end
planned_methods.read = function() no_data() end
Planned.__index = function(self, key)
  if type(key) == "number" then no_data() end
  return planned_methods[key]
end
Planned.__newindex = function() no_data() end
Planned.__len = function(self) return rawget(self, "count") end
Planned.__tostring = function(self)
  return string.format("gpuexp.Buffer(planned, %s x %d)", rawget(self, "type"), rawget(self, "count"))
end

-- A plan's buffer: its type and count checked as a GPU's are (the types are C's table, named in
-- the error with the script's line), its size, no memory.
function M.buffer(element_type, count)
  local bytes = gpuexp._element_bytes(element_type, count)
  return setmetatable({kind = "planned", type = element_type, count = count, bytes = bytes}, Planned)
end

-- The device of a plan: the architecture's limits under the names Device facts use.
function M.device(arch)
  local limits = gpuexp.arch_limits(arch)
  local facts = {}
  for key, value in pairs(limits) do facts[key] = value end
  facts.name = require("gpuexp.store.meta").plan_name(limits.arch)
  facts.plan = true
  local device = {facts = facts}
  for key, value in pairs(facts) do device[key] = value end
  local attribute_names = {
    max_threads_per_block = "max_threads_per_block", max_threads_per_multiprocessor = "max_threads_per_sm",
    max_blocks_per_multiprocessor = "max_blocks_per_sm", max_registers_per_multiprocessor = "registers_per_sm",
    max_registers_per_block = "registers_per_block", warp_size = "warp_size",
    max_shared_memory_per_multiprocessor = "shared_per_sm_bytes", max_shared_memory_per_block = "shared_per_block_bytes",
    max_shared_memory_per_block_optin = "shared_per_block_optin_bytes",
    reserved_shared_memory_per_block = "reserved_shared_per_block_bytes",
  }
  function device:attribute(name)
    local field = attribute_names[name]
    if not field then gpuexp.error("usage", "attribute '" .. tostring(name) .. "' is not known in an offline plan", 2) end
    return facts[field]
  end
  function device:attributes()
    local all = {}
    for name, field in pairs(attribute_names) do all[name] = facts[field] end
    return all
  end
  function device:alloc(element_type, count)
    local buffer = M.buffer(element_type, count) -- not a tail call: the error names the script's line
    return buffer
  end
  function device:synchronize() end
  function device:memory_info() return nil end
  function device:flush_l2() end -- enqueued on a GPU; nothing to evict in a plan
  -- no clock and no NVML in a plan: nil and why, never an invented number
  function device:sm_clock() return nil, "no SM clock in an offline plan (nothing runs on a GPU)" end
  function device:telemetry() return nil, "no telemetry in an offline plan (nothing runs on a GPU)" end
  return device
end

-- Streams and events of a plan: work enqueued on them is checked, nothing runs; an event has no
-- time (elapsed_ms is nil, never an invented number), a stream and an event are always done.
local PlannedStream, PlannedEvent = {}, {}
local function check_planned(value, class, what)
  if getmetatable(value) ~= class then
    gpuexp.error("usage", what .. ": expected a " .. (class == PlannedStream and "gpuexp.stream{}" or "gpuexp.event{}") ..
      " of this plan, got " .. type(value), 3)
  end
  return value
end
PlannedStream.__index = {
  synchronize = function(self) check_planned(self, PlannedStream, "stream:synchronize") end,
  query = function(self) check_planned(self, PlannedStream, "stream:query") return true end,
  wait = function(self, event)
    check_planned(self, PlannedStream, "stream:wait")
    check_planned(event, PlannedEvent, "stream:wait")
  end,
  destroy = function() end,
}
PlannedStream.__tostring = function(self) return "gpuexp.Stream(planned, priority " .. self.priority .. ")" end
PlannedEvent.__index = {
  record = function(self, stream)
    check_planned(self, PlannedEvent, "event:record")
    if stream ~= nil then check_planned(stream, PlannedStream, "event:record") end
  end,
  synchronize = function(self) check_planned(self, PlannedEvent, "event:synchronize") end,
  query = function(self) check_planned(self, PlannedEvent, "event:query") return true end,
  elapsed_ms = function(self, other)
    check_planned(self, PlannedEvent, "event:elapsed_ms")
    check_planned(other, PlannedEvent, "event:elapsed_ms")
    return nil
  end,
  destroy = function() end,
}
PlannedEvent.__tostring = function() return "gpuexp.Event(planned)" end

local function check_options(options, allowed, what)
  if options == nil then return {} end
  if type(options) ~= "table" then gpuexp.error("usage", what .. ": expected a table of options", 3) end
  require("gpuexp.api.option_keys").check(options, allowed, what, 4)
  return options
end

-- A device = option must be the plan's own device (gpuexp.device()).
local function check_device(options, device, what)
  if options.device ~= nil and options.device ~= device then
    gpuexp.error("usage", what .. ": 'device' must be gpuexp.device() of this plan, got " .. type(options.device), 3)
  end
end

function M.stream(options, device)
  options = check_options(options, {device = true, priority = true, blocking = true}, "stream")
  check_device(options, device, "stream")
  local priority = options.priority or 0
  if math.type(priority) ~= "integer" then gpuexp.error("usage", "stream: priority must be an integer", 2) end
  return setmetatable({kind = "planned_stream", priority = priority, device = device}, PlannedStream)
end

function M.event(options, device)
  options = check_options(options, {device = true, timing = true}, "event")
  check_device(options, device, "event")
  return setmetatable({kind = "planned_event", timing = options.timing ~= false, device = device}, PlannedEvent)
end

-- The run options that need a GPU, and what a plan does without one: nothing.
local NEED_A_GPU = {{"counters", "--counters", "no counter columns"}, {"telemetry", "--telemetry", "no NVML readings"},
  {"diagnose", "--diagnose (gpuexp diagnose)", "no diagnosis"},
  {"profile", "--profile (gpuexp profile)", "no capture range for a profiler"},
  {"lines", "--lines", "no line profiles (gpuexp.line_table reads a cubin's lines)"}}

-- The line that says which of these options a plan ignores, or nil when none was given.
function M.unused_options(options)
  local named, lost = {}, {}
  for _, option in ipairs(NEED_A_GPU) do
    if options and options[option[1]] then named[#named + 1], lost[#lost + 1] = option[2], option[3] end
  end
  if #named == 0 then return nil end
  return string.format("gpuexp: %s: an offline plan runs nothing on a GPU, so %s nothing here (%s)",
    table.concat(named, ", "), #named == 1 and "it does" or "they do", table.concat(lost, "; "))
end

function M.install(gpuexp)
  local device = M.device(gpuexp.offline_arch)
  gpuexp.device = function() return device end
  gpuexp.devices = function() return {device} end
  gpuexp.device_count = function() return 1 end
  gpuexp.stream = function(options) return M.stream(options, device) end
  gpuexp.event = function(options) return M.event(options, device) end
  gpuexp.stream_priorities = function() return 0, -5 end -- (every Hopper and Ampere GPU's range)
  local host = gpuexp.host
  gpuexp.host = function(element_type, count, options)
    if type(options) == "table" and options.pinned then
      local buffer = M.buffer(element_type, count) -- not a tail call: the error names the script's line
      return buffer
    end
    return host(element_type, count, options)
  end
end

return M
