-- How much of the overlap study's pipeline ran at once, from its --trace timeline: over the time
-- the GPU was busy with the pipeline's chunks (copies of one chunk's size and the kernels on the
-- same streams), the share with one, two or all three of H2D copy, kernel and D2H copy running.
--   gpuexp --trace T.json --only memory=pinned,streams=4 experiments/overlap.lua
--   gpuexp --inline --arch sm_90 bench/overlap_summary.lua T.json [CHUNK_BYTES]
local path = assert(arg[1], "usage: gpuexp bench/overlap_summary.lua TRACE.json [CHUNK_BYTES]")
local chunk_bytes = tonumber(arg[2]) or 16 * 1024 * 1024
local file = assert(io.open(path))
local events = require("cjson").decode(file:read("a"))
file:close()
local names, pipeline = {}, {}
for _, e in ipairs(events) do
  if e.ph == "M" and e.name == "thread_name" then names[e.pid .. ":" .. e.tid] = e.args.name end
  if e.ph == "X" and e.cat == "memcpy" and e.args.bytes == chunk_bytes then pipeline[e.pid .. ":" .. e.tid] = true end
end
local points, per_stream = {}, {}
for _, e in ipairs(events) do
  local where = e.pid and (e.pid .. ":" .. tostring(e.tid))
  if e.ph == "X" and pipeline[where] and (e.cat == "kernel" or e.cat == "memcpy") then
    local kind = e.cat == "kernel" and "kernel" or (e.name:find("HtoD") and "h2d" or "d2h")
    points[#points + 1] = {e.ts, 1, kind}
    points[#points + 1] = {e.ts + e.dur, -1, kind}
    local row = per_stream[names[where] or where] or {kernel = 0, h2d = 0, d2h = 0}
    row[kind] = row[kind] + 1
    per_stream[names[where] or where] = row
  end
end
assert(#points > 0, "no copies of " .. chunk_bytes .. " bytes in " .. path)
table.sort(points, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
local active, at_once, last = {kernel = 0, h2d = 0, d2h = 0}, {[0] = 0, 0, 0, 0}, nil
for _, p in ipairs(points) do
  if last then
    local n = (active.kernel > 0 and 1 or 0) + (active.h2d > 0 and 1 or 0) + (active.d2h > 0 and 1 or 0)
    at_once[n] = at_once[n] + p[1] - last
  end
  active[p[3]] = active[p[3]] + p[2]
  last = p[1]
end
local busy = at_once[1] + at_once[2] + at_once[3]
for stream, row in pairs(per_stream) do
  print(string.format("%-10s %4d H2D copies, %4d kernels, %4d D2H copies", stream, row.h2d, row.kernel, row.d2h))
end
print(string.format("busy %.1f ms: one stage at a time %.1f%%, two at once %.1f%%, all three at once %.1f%%",
  busy / 1000, 100 * at_once[1] / busy, 100 * at_once[2] / busy, 100 * at_once[3] / busy))
