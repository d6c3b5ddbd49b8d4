-- gpuexp profile hands one point to the profilers: under `ncu --profile-from-start off` and
-- `nsys profile --capture-range=cudaProfilerApi` exactly the chosen point's launch is captured
-- (one fma_chain launch of the shipped nightly's 12 points), and the run prints both commands.
-- Each profiler that is not installed is skipped with a note; with neither, the test skips.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local function found(tool)
  local pipe = io.popen("command -v " .. tool .. " 2>/dev/null")
  local path = pipe:read("l")
  pipe:close()
  return path
end
local ncu, nsys = found("ncu"), found("nsys")
-- the cells of a CSV line whose cells hold no comma (quotes stripped)
local function cells_of(line)
  local cells = {}
  for cell in (line .. ","):gmatch("([^,]*),") do cells[#cells + 1] = cell:gsub('^"', ""):gsub('"$', "") end
  return cells
end
if not ncu and not nsys then io.stderr:write("SKIP: neither ncu nor nsys here\n") os.exit(77) end
local experiment = gpuexp.script_dir .. "/../../experiments/nightly/kernels.lua"
local point = "case=fma,block_size=256"

-- without a profiler: the row is that one launch, and the commands are said
local code, stdout, stderr = ws.run(string.format("profile --quiet --only '%s' -o alone.csv %s", point, experiment))
T.eq(code, 0, "gpuexp profile: " .. stderr)
T.ok(stderr:find("ncu --profile-from-start off -o gpuexp-profile gpuexp profile --only '" .. point .. "'", 1, true),
  "the ncu command: " .. stderr)
T.ok(stderr:find("nsys profile --capture-range=cudaProfilerApi", 1, true), "the nsys command")
local rows = gpuexp.csv.read(ws.dir .. "/alone.csv")
T.eq(#rows, 1, "one point")
T.eq(rows[1].samples, 1, "one launch measured")
T.eq(rows[1].stop_reason, "profile", "said so")

if ncu then
  code, stdout, stderr = ws.run(string.format("profile --quiet --only '%s' -o ncu.csv %s", point, experiment),
    string.format("%s --profile-from-start off --csv --page raw --metrics gpu__time_duration.sum --log-file %s/ncu_log.csv",
      ncu, ws.dir) .. " ")
  T.eq(code, 0, "under ncu: " .. stderr)
  local log = ws.read("ncu_log.csv") or ""
  local kernels, name_column = {}, nil
  for line in log:gmatch("[^\n]+") do
    local cells = cells_of(line)
    if cells[1] == "ID" then
      for i, cell in ipairs(cells) do if cell == "Kernel Name" then name_column = i end end
    elseif name_column and tonumber(cells[1]) then
      kernels[#kernels + 1] = cells[name_column]
    end
  end
  print("ncu captured: " .. table.concat(kernels, ", "))
  T.eq(#kernels, 1, "ncu captured one launch:\n" .. log)
  T.eq(kernels[1], "fma_chain", "and it is the point's kernel")
end

if not nsys then print("nsys is not installed here: its capture was not tried") end
if nsys then
  code, stdout, stderr = ws.run(string.format("profile --quiet --only '%s' -o nsys.csv %s", point, experiment),
    string.format("%s profile --capture-range=cudaProfilerApi -o %s/capture --force-overwrite true", nsys, ws.dir) .. " ")
  T.eq(code, 0, "under nsys: " .. stderr)
  local pipe = io.popen(string.format("%s stats --report cuda_gpu_kern_sum --format csv --output - %s/capture.nsys-rep 2>&1",
    nsys, ws.dir))
  local summary = pipe:read("a")
  pipe:close()
  print(summary)
  local instances, names, column = 0, {}, nil
  for line in summary:gmatch("[^\n]+") do
    local cells = cells_of(line)
    if not column then
      for i, cell in ipairs(cells) do if cell == "Instances" then column = i end end
    elseif tonumber(cells[column]) then
      instances = instances + tonumber(cells[column])
      names[#names + 1] = cells[#cells]
    end
  end
  T.eq(instances, 1, "nsys captured one launch:\n" .. summary)
  T.eq(names[1], "fma_chain", "and it is the point's kernel")
end
T.done()
