-- The metadata file written beside each CSV: where and with what the numbers were taken.
local json = require("gpuexp.store.json")
local csv = require("gpuexp.store.csv")

local M = {}

-- The whole file, or nil when it cannot be read.
local function read_all(path)
  local file = io.open(path, "rb")
  if not file then return nil end
  local text = file:read("a")
  file:close()
  return text
end
M.read_all = read_all

-- A JSON file (metadata) decoded, nil and its text; or nil and why (missing, empty, not JSON: a
-- file cut by a kill or a full disk before gpuexp wrote metadata atomically).
function M.read_json(path)
  local text = read_all(path)
  if not text then return nil, path .. " does not exist or cannot be read" end
  if text == "" then return nil, path .. " is empty" end
  local value, why = json.decode(text)
  if value == nil then return nil, path .. " is not JSON (" .. tostring(why) .. ")" end
  -- metadata is an object: a number or a string there (a damaged file) is said, not indexed later
  if type(value) ~= "table" then return nil, path .. " holds a JSON " .. type(value) .. ", not an object" end
  return value, nil, text
end

function M.host() return gpuexp.hostname() end

-- The name of an offline plan's device, the machine of its runs: "offline plan for sm_86".
function M.plan_name(arch) return "offline plan for " .. arch end

-- The machine a run's metadata says it ran on: its GPU's name and architecture, or an offline
-- plan's name and architecture (the plan's runs are keyed by it: a plan for sm_86 is never the
-- baseline of one for sm_90); nil for metadata that says neither.
function M.machine(info)
  if type(info) ~= "table" then return nil end
  local gpu = type(info.gpu) == "table" and info.gpu or {}
  if gpu.name then return {name = gpu.name, arch = gpu.arch} end
  local arch = info.offline_arch or (type(info.sweep) == "table" and info.sweep.offline_arch)
  if type(arch) == "string" then return {name = M.plan_name(arch), arch = arch, plan = true} end
  return nil
end

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
    versions = gpuexp.versions(true), -- NVRTC and CUPTI when loaded (a sweep adds CUPTI's once it is)
    script = gpuexp.script and (gpuexp._realpath(gpuexp.script) or gpuexp.script), -- absolute: bisect finds it
    script_hash = script_text and gpuexp.hash(script_text) or nil,
    arguments = gpuexp.args,
    time_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    host = M.host(),
  }
  if device and device.facts and device.facts.plan then -- an offline plan's device: only its architecture
    info.offline_arch = device.facts.arch
  elseif device then
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
    -- what NVML says of the GPU's settings (gpuexp only reads them): the applications clock a
    -- machine's owner may have set, the enforced power limit, what held the clocks at the start
    local telemetry = device.telemetry and device:telemetry()
    if telemetry then
      info.gpu.applications_clock_mhz, info.gpu.power_limit_w = telemetry.applications_clock_mhz, telemetry.power_limit_w
      info.gpu.throttle_reasons_at_start, info.gpu.temperature_c_at_start = telemetry.throttle_reasons, telemetry.temperature_c
    end
  end
  return info
end

function M.path_for(csv_path)
  return (csv_path:gsub("%.csv$", "")) .. ".meta.json"
end

-- Written whole through a temporary file and a rename: never a cut or empty file in its place.
-- Returns the text written.
function M.write(path, info)
  local text = json.encode(info) .. "\n"
  csv.write_file(path, text)
  return text
end

return M
