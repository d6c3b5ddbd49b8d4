-- Offline plans (no GPU needed): every shipped experiment runs with --arch, its timing columns stay
-- empty, and its occupancy columns equal the calculator's (gpuexp occupancy) for the same inputs.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local root = gpuexp.script_dir .. "/../.."

local function run(command)
  local pipe = io.popen(command .. " 2>&1")
  local output = pipe:read("a")
  local ok, _, code = pipe:close()
  return ok and 0 or code, output
end

local listing = io.popen("ls " .. root .. "/experiments/*.lua")
local experiments = {}
for path in listing:lines() do experiments[#experiments + 1] = path end
listing:close()
T.ok(#experiments >= 1, "experiments found")

local work = T.temporary_directory()
local compared = 0
for _, arch in ipairs({"sm_86", "sm_90"}) do
  for _, experiment in ipairs(experiments) do
    local out = string.format("%s/%s_%s.csv", work, arch, experiment:match("([^/]+)%.lua$"))
    -- sm_90 runs in this process (--inline), sm_86 under the supervisor: both ways through a sweep
    local inline = arch == "sm_90" and "--inline " or ""
    local code, output = run(string.format("%s --quiet %s--arch %s --out %s %s", binary, inline, arch, out, experiment))
    T.eq(code, 0, experiment .. " offline for " .. arch .. ": " .. output)
    T.ok(output:find("offline PLAN for " .. arch, 1, true), "the run says it is a plan")
    -- a script may write several CSVs named from --out (x.csv, or x_part.csv)
    local base = out:gsub("%.csv$", "")
    local files = io.popen("ls " .. base .. "*.csv")
    local rows = {}
    for path in files:lines() do
      for _, row in ipairs((gpuexp.csv.read(path))) do rows[#rows + 1] = row end
      os.remove(path)
    end
    files:close()
    T.ok(#rows > 0, "rows written by " .. experiment)
    for _, row in ipairs(rows) do
      -- a variant the architecture lacks is skipped, saying which architecture it needs
      T.ok(row.status == "ok" or (row.status == "skipped" and tostring(row.error):find("needs sm_%d+")),
        "row status ok, or skipped with the reason: " .. tostring(row.status) .. " " .. tostring(row.error))
      T.ok(row.median_ms == nil or row.median_ms == "", "no timing in a plan")
      if row.status == "ok" then T.eq(row.error, "", "no error in a plan row") end
      if row.theoretical_occupancy_pct and row.block_size then
        local _, calculator = run(string.format("%s occupancy --arch %s --block %d --registers %d --shared %d --barriers %d",
          binary, arch, row.block_size, row.registers, row.static_shared_bytes, row.static_shared_bytes > 0 and 1 or 0))
        local line = calculator:match("\n([^\n]+)")
        local fields = {}
        for field in (line .. ","):gmatch("([^,]*),") do fields[#fields + 1] = field end
        T.eq(row.active_blocks_per_sm, tonumber(fields[11]), "blocks per SM as the calculator, " .. row.variant)
        T.near(row.theoretical_occupancy_pct, tonumber(fields[14]), 0.006, "occupancy as the calculator")
        T.eq(row.limiter, fields[15], "limiter as the calculator")
        compared = compared + 1
      end
    end
    os.remove(out)
  end
end
T.ok(compared >= 40, "rows compared: " .. compared)

-- the same model from Lua
local o = gpuexp.occupancy{arch = "sm_80", block = 256, registers = 33}
T.eq(o.blocks_per_sm, 6, "cliff: 6 blocks"); T.eq(o.occupancy_pct, 75.0, "cliff: 75%"); T.eq(o.limiter, "registers", "limiter")
T.eq(o.limit_barriers, nil, "no barrier limit before 9.0")
local picked = gpuexp.occupancy{arch = "sm_90", block = 256, registers = 16, carveout = "driver"}
T.eq(picked.shared_config_bytes, 8192, "driver's carve-out pick")
T.eq(gpuexp.arch_limits("sm_89").max_blocks_per_sm, 24, "table row")
T.eq(#gpuexp.arch_limits(), 9, "nine architectures")
T.raises(function() gpuexp.occupancy{arch = "sm_61", block = 32} end, "no occupancy limits for architecture 'sm_61'")
T.raises(function() gpuexp.occupancy{arch = "sm_90"} end, "'block' is required")
T.raises(function() gpuexp.occupancy{arch = "sm_90", block = 64, carveout = "huge"} end, "carveout must be")
T.done()
