-- Offline plans (gpuexp --arch sm_XX, or no GPU found): a device made of the architecture's
-- limits and buffers with a size but no memory, so the same script runs in both modes.
-- Kernels compile for the architecture, launches are checked but not run, and timings are empty.
local M = {}

local element_bytes = {f32 = 4, f64 = 8, i32 = 4, u32 = 4, i64 = 8, u64 = 8, u8 = 1, i8 = 1}

local Planned = {}
local function no_data()
  gpuexp.error("usage", "no data: this buffer belongs to an offline plan (nothing runs on a GPU)", 3)
end
local planned_methods = {
  fill = function(self) return self end,
  random = function(self) return self end,
  copy_from = function(self) return self end,
  free = function() end,
  get = no_data, set = no_data, to_table = no_data, compare = no_data,
  time_copy_from = function() return {samples = 0} end,
}
Planned.__index = function(self, key)
  if type(key) == "number" then no_data() end
  return planned_methods[key]
end
Planned.__newindex = function() no_data() end
Planned.__len = function(self) return rawget(self, "count") end
Planned.__tostring = function(self)
  return string.format("gpuexp.Buffer(planned, %s x %d)", rawget(self, "type"), rawget(self, "count"))
end

function M.buffer(element_type, count)
  local size = element_bytes[element_type]
  if not size then gpuexp.error("usage", "unknown element type '" .. tostring(element_type) .. "'", 3) end
  if math.type(count) ~= "integer" or count < 0 then gpuexp.error("usage", "element count must be an integer >= 0", 3) end
  return setmetatable({kind = "planned", type = element_type, count = count, bytes = count * size}, Planned)
end

-- The device of a plan: the architecture's limits under the names Device facts use.
function M.device(arch)
  local limits = gpuexp.arch_limits(arch)
  local facts = {}
  for key, value in pairs(limits) do facts[key] = value end
  facts.name = "offline plan for " .. limits.arch
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
  function device:alloc(element_type, count) return M.buffer(element_type, count) end
  function device:synchronize() end
  function device:memory_info() return nil end
  -- what only a GPU can tell: an error at the script's line, not a nil method
  local function needs_gpu(what)
    return function()
      gpuexp.error("usage", string.format("device:%s(): an offline plan for %s has no GPU to read; check " ..
        "gpuexp.plan before asking", what, limits.arch))
    end
  end
  device.sm_clock, device.telemetry, device.flush_l2 = needs_gpu("sm_clock"), needs_gpu("telemetry"),
    needs_gpu("flush_l2")
  return device
end

function M.install(gpuexp)
  local device = M.device(gpuexp.offline_arch)
  gpuexp.device = function() return device end
  gpuexp.devices = function() return {device} end
  local host = gpuexp.host
  gpuexp.host = function(element_type, count, options)
    if type(options) == "table" and options.pinned then return M.buffer(element_type, count) end
    return host(element_type, count, options)
  end
end

return M
