-- gpuexp merge on hand-made shards: rows and samples joined in point order, each point's samples
-- from the part whose row was kept, duplicated and unknown points listed, a damaged samples file
-- named by file and line, parts that do not belong together refused.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local json = require("cjson")

-- a sweep of 4 points (n = 1..4) in 2 shards: shard 0 has n = 1, 3; shard 1 has n = 2, 4
local function shard(index, rows, sample_lines, extra)
  local stem = string.format("s.shard-%d-of-2", index)
  local cells, indices = {}, {}
  for k = 1, 2 do
    local n = index + 1 + (k - 1) * 2
    cells[k], indices[k] = {tostring(n)}, n
  end
  local info = {script_hash = (extra and extra.script_hash) or "abc123", gpu = {name = "H100"},
    sweep = {name = "s", points = 4, axes = {{name = "n", values = {1, 2, 3, 4}}}, shard = {index = index, count = 2},
      share_cells = cells, share_indices = indices}, parts = {{started_utc = "2026-01-01T00:00:00Z"}}}
  ws.write(stem .. ".meta.json", json.encode(info))
  ws.write(stem .. ".csv", "n,median_ms,status,error\n" .. table.concat(rows, "\n") .. "\n")
  if sample_lines then
    ws.write(stem .. ".samples.csv", "n,field,values\n" .. table.concat(sample_lines, "\n") .. "\n")
  end
  return stem .. ".csv"
end

local p0 = shard(0, {"1,1.5,ok,", "3,3.5,ok,"}, {"3,samples_ms,3.4 3.6", "1,samples_ms,1.4 1.6"})
local p1 = shard(1, {"2,2.5,ok,", "4,4.5,ok,"}, {"2,samples_ms,2.4 2.6", "4,samples_ms,4.4 4.6"})
local code, stdout, stderr = ws.run("merge m.csv " .. p0 .. " " .. p1)
T.eq(code, 0, "merge: " .. stderr)
T.ok(stdout:find("merged 2 part(s) into m.csv: 4 of 4 points", 1, true), stdout)
T.eq(ws.read("m.csv"), "n,median_ms,status,error\n1,1.5,ok,\n2,2.5,ok,\n3,3.5,ok,\n4,4.5,ok,\n", "rows in point order")
T.eq(ws.read("m.samples.csv"), "n,field,values\n1,samples_ms,1.4 1.6\n2,samples_ms,2.4 2.6\n" ..
  "3,samples_ms,3.4 3.6\n4,samples_ms,4.4 4.6\n", "samples in point order")
-- the merged run reads back with its samples
local run = assert(require("gpuexp.store.result").read(ws.dir .. "/m.csv"))
T.eq(table.concat(run:samples(require("gpuexp.store.result").key({"4"}), "samples_ms"), " "), "4.4 4.6",
  "the merged run's samples of point 4")

-- a point in two parts: the first row kept, with its own samples; a point the sweep lacks is listed
local dup = ws.write("dup.csv", "n,median_ms,status,error\n2,9.5,ok,\n9,1,ok,\n")
ws.write("dup.meta.json", ws.read("s.shard-1-of-2.meta.json"))
ws.write("dup.samples.csv", "n,field,values\n2,samples_ms,9.4 9.6\n9,samples_ms,1\n")
code, _, stderr = ws.run("merge d.csv " .. p0 .. " " .. p1 .. " dup.csv")
T.eq(code, 1, "a merge with a duplicate fails: " .. stderr)
T.ok(stderr:find("1 duplicated point(s) (the first row kept):\n  2 (in " .. p1 .. " and dup.csv:2)", 1, true), stderr)
T.ok(stderr:find("1 row(s) for points the sweep does not have (left out):\n  dup.csv:3: 9", 1, true), stderr)
T.ok(ws.read("d.csv"):find("\n2,2.5,ok,\n", 1, true), "the first row of point 2 kept")
T.ok(ws.read("d.samples.csv"):find("\n2,samples_ms,2.4 2.6\n", 1, true), "its samples kept")
T.ok(not ws.read("d.samples.csv"):find("9.4", 1, true), "the duplicate's samples left out")

-- no part with samples: no samples file, and an earlier merge's is removed
ws.write("p0only.csv", ws.read(p0)); ws.write("p0only.meta.json", ws.read("s.shard-0-of-2.meta.json"))
ws.write("p1only.csv", ws.read(p1)); ws.write("p1only.meta.json", ws.read("s.shard-1-of-2.meta.json"))
code, _, stderr = ws.run("merge m.csv p0only.csv p1only.csv")
T.eq(code, 0, "merge without samples: " .. stderr)
T.eq(ws.read("m.samples.csv"), nil, "no samples file beside a merge of parts without samples")

-- a damaged samples file stops the merge, named by file and line, and writes nothing
ws.write("s.shard-1-of-2.samples.csv", "n,field,values\n2,samples_ms\n")
code, _, stderr = ws.run("merge bad.csv " .. p0 .. " " .. p1)
T.eq(code, 2, "a damaged samples file: " .. stderr)
T.ok(stderr:find("s.shard-1-of-2.samples.csv:2: 2 cells where the header has 3", 1, true), stderr)
T.eq(ws.read("bad.csv"), nil, "nothing written")

-- parts of another script are refused
local other = shard(1, {"2,2.5,ok,"}, nil, {script_hash = "ffff0000"})
code, _, stderr = ws.run("merge x.csv " .. p0 .. " " .. other)
T.eq(code, 2, "another script: " .. stderr)
T.ok(stderr:find(other .. " comes from another script (hash ffff0000, " .. p0 .. " has abc123)", 1, true), stderr)
T.done()
