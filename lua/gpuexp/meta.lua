-- The metadata file written beside each CSV: where and with what the numbers were taken.
local M = {}

local function json(value, indent)
  indent = indent or ""
  local t = type(value)
  if t == "table" then
    local keys = {}
    for k in pairs(value) do keys[#keys + 1] = k end
    if #keys == #value and #keys > 0 then
      local items = {}
      for i, v in ipairs(value) do items[i] = json(v, indent .. "  ") end
      return "[" .. table.concat(items, ", ") .. "]"
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local items = {}
    for _, k in ipairs(keys) do
      items[#items + 1] = indent .. "  " .. json(tostring(k)) .. ": " .. json(value[k], indent .. "  ")
    end
    if #items == 0 then return "{}" end
    return "{\n" .. table.concat(items, ",\n") .. "\n" .. indent .. "}"
  elseif t == "string" then
    return '"' .. value:gsub('[%c"\\]', function(c)
      return string.format("\\u%04x", c:byte())
    end) .. '"'
  elseif t == "number" then
    if value ~= value or value == math.huge or value == -math.huge then return "null" end
    return math.type(value) == "integer" and tostring(value) or string.format("%.10g", value)
  elseif t == "boolean" then
    return tostring(value)
  end
  return "null"
end
M.json = json

-- The whole file, or nil when it cannot be read.
local function read_all(path)
  local file = io.open(path, "rb")
  if not file then return nil end
  local text = file:read("a")
  file:close()
  return text
end
M.read_all = read_all

-- A JSON file (metadata) decoded, or nil when it is missing or not JSON.
function M.read_json(path)
  local text = read_all(path)
  if not text then return nil end
  local ok, value = pcall(require("cjson").decode, text)
  return ok and value or nil
end

function M.host() return gpuexp.hostname() end

-- The kernel driver's version ("580.159.04") from /proc/driver/nvidia/version, or nil.
function M.driver_version()
  local text = read_all("/proc/driver/nvidia/version")
  return text and text:match("NVRM version:.-%s(%d+%.%d+[%.%d]*)%s") or nil
end

-- M.collect([device]) -> table of facts about this run; device may be nil (offline plan).
function M.collect(device)
  local script_text = gpuexp.script and read_all(gpuexp.script)
  local info = {
    gpuexp_version = gpuexp.version,
    versions = gpuexp.versions(),
    script = gpuexp.script,
    script_hash = script_text and gpuexp.hash(script_text) or nil,
    arguments = gpuexp.args,
    time_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    host = M.host(),
  }
  if device then
    info.driver_version = M.driver_version()
    local facts = device.facts
    info.gpu = {
      name = facts.name, uuid = facts.uuid, pci_bus_id = facts.pci_bus_id, arch = facts.arch,
      compute_capability = facts.compute_capability, sm_count = facts.sm_count,
      sm_clock_max_khz = facts.sm_clock_khz, memory_clock_max_khz = facts.memory_clock_khz,
      memory_bus_width_bits = facts.memory_bus_width_bits, memory_bytes = facts.memory_bytes,
      l2_bytes = facts.l2_bytes, peak_dram_gbps = facts.peak_dram_gbps, peak_fp32_gflops = facts.peak_fp32_gflops,
      ecc_enabled = device:attribute("ecc_enabled") == 1,
    }
  end
  return info
end

function M.path_for(csv_path)
  return (csv_path:gsub("%.csv$", "")) .. ".meta.json"
end

function M.write(path, info)
  local file, message = io.open(path, "w")
  if not file then gpuexp.error("system", "cannot write " .. path .. ": " .. tostring(message), 2) end
  file:write(json(info), "\n")
  file:close()
end

return M
