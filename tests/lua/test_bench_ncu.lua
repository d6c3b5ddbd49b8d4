-- The bench scripts' comparisons against ncu, offline on synthetic files: bench/ncu_csv.lua reads
-- ncu's raw CSV once for all of them (units, thousands separators, gpuexp's own gx_ kernels left
-- out); sequence_ncu.lua's compare mode and compare_ncu.lua give the numbers those files imply.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local bench = gpuexp.script_dir .. "/../../bench"
local ws = T.workspace(binary)

local function ncu_file(unit, rows)
  local lines = {'"ID","Kernel Name","gpu__time_duration.sum","sm__warps_active.avg.pct_of_peak_sustained_active"',
    '"","","' .. unit .. '","%"'}
  for i, r in ipairs(rows) do lines[#lines + 1] = string.format('"%d","%s","%s","%s"', i - 1, r[1], r[2], r[3] or "") end
  return table.concat(lines, "\n") .. "\n"
end

-- the reader: microseconds to ms, a thousands separator, a gx_ kernel skipped, fields by name
local ncu_csv = dofile(bench .. "/ncu_csv.lua")
ws.write("a.csv", "==PROF== Connected\n" .. ncu_file("usecond", {{"gx_random", "3.0"}, {"scale", "1,234.5", "50.5"},
  {"add", "2.5", "61"}}))
local times = ncu_csv.times(ws.dir .. "/a.csv")
T.eq(#times, 2, "two launches, gx_random left out")
T.near(times[1], 1.2345, 1e-12, "1,234.5 us is 1.2345 ms")
T.near(times[2], 0.0025, 1e-12, "2.5 us")
local csv = ncu_csv.read(ws.dir .. "/a.csv")
T.eq(csv.launches[2]["Kernel Name"], "add", "fields by column name")
T.eq(ncu_csv.number(csv.launches[1]["sm__warps_active.avg.pct_of_peak_sustained_active"]), 50.5, "a number")
T.eq(ncu_csv.read(ws.dir .. "/none.csv"), nil, "no file: nil")
ws.write("bad.csv", ncu_file("furlong", {{"scale", "1"}}))
T.raises(function() ncu_csv.times(ws.dir .. "/bad.csv") end, "ncu's unit of gpu__time_duration: furlong")

-- sequence_ncu.lua compare: ncu's per-kernel medians plus the trace's gaps against gpuexp's numbers
local rows = {}
for run = 1, 3 do
  for _, k in ipairs({{"scale", "1000"}, {"add", "2000"}, {"add", "3000"}}) do
    rows[#rows + 1] = {k[1], tostring(tonumber(k[2]) + run)} -- ns: medians 1002, 2002, 3002
  end
end
ws.write("ncu.csv", ncu_file("nsecond", rows))
local events = {}
for run = 0, 2 do -- kernels of 1, 2 and 3 us with gaps of 0.5 and 1.5 us
  local t = run * 100
  events[#events + 1] = string.format('{"ph":"X","cat":"kernel","name":"scale","ts":%d,"dur":1}', t)
  events[#events + 1] = string.format('{"ph":"X","cat":"kernel","name":"add","ts":%g,"dur":2}', t + 1.5)
  events[#events + 1] = string.format('{"ph":"X","cat":"kernel","name":"add","ts":%g,"dur":3}', t + 5)
end
ws.write("trace.json", "[" .. table.concat(events, ",") .. "]")
ws.write("gpuexp.json", '{"sequence_hot_ms":0.008,"sequence_graph_ms":0.006006,"kernels_ms":[0.001,0.002,0.003]}')
local code, out, err = ws.run("--quiet --inline --arch sm_90 " .. bench .. "/sequence_ncu.lua compare " .. ws.dir)
T.eq(code, 0, "sequence_ncu compare runs: " .. err)
T.ok(out:find("median of 3 runs: 0.0010 + 0.0020 + 0.0030 = 0.0060 ms", 1, true), "ncu's medians: " .. out)
T.ok(out:find("0.0005 + 0.0015 = 0.0020 ms; first kernel start to last end 0.0080 ms", 1, true), "the gaps: " .. out)
T.ok(out:find("sequence hot (events):   0.0080 ms against ncu + gaps 0.0080 ms: -0.07%", 1, true), out)
T.ok(out:find("sequence graph (events): 0.0060 ms against ncu alone 0.0060 ms: +0.00%", 1, true), out)
T.ok(out:find("within 5%: yes", 1, true), out)

-- compare_ncu.lua: gpuexp's values by point against the K-th launch of one ncu file
ws.write("gpuexp.csv", "point,name,sm__warps_active.avg.pct_of_peak_sustained_active\n1,p1,51.5\n2,p2,70\n")
ws.write("ncu_all.csv", ncu_file("nsecond", {{"gx_flush_l2", "1", "1"}, {"k", "10", "50.5"}, {"k", "10", "61"}}))
code, out, err = ws.run("--quiet --inline --arch sm_90 " .. bench .. "/compare_ncu.lua " .. ws.dir .. " gpuexp one")
T.eq(code, 0, "compare_ncu runs: " .. err)
T.ok(out:find("2 values compared with ncu, 1 outside tolerance", 1, true), "p1 within 2 points, p2 9 points off: " .. out)
T.ok(ws.read("compare_gpuexp_one.csv"), "the comparison written")
T.done()
