-- Where a run's copy time went, from its --trace timeline: for each kind of copy (direction,
-- pageable or pinned), the copy engine's time and rate, beside the driver calls' time on the host.
-- A pageable copy's driver call lasts much longer than its DMA: the driver stages it through a
-- pinned buffer in chunks. A pinned copy's call lasts about as long as its DMA.
--   gpuexp --trace T.json --only size_mb=64 experiments/transfer_bandwidth.lua
--   gpuexp --inline --arch sm_90 bench/trace_summary.lua T.json
local path = assert(arg[1], "usage: gpuexp bench/trace_summary.lua TRACE.json")
local file = assert(io.open(path))
local events = require("cjson").decode(file:read("a"))
file:close()
local by_correlation = {}
for _, e in ipairs(events) do
  if e.ph == "X" and e.cat == "driver" then by_correlation[e.args.correlation] = e end
end
local groups, order = {}, {}
for _, e in ipairs(events) do
  if e.ph == "X" and e.cat == "memcpy" then
    local g = groups[e.name]
    if not g then
      g = {name = e.name, copies = 0, bytes = 0, dma_us = 0, call_us = 0, calls = {}}
      groups[e.name] = g
      order[#order + 1] = e.name
    end
    g.copies = g.copies + 1 -- a pageable copy can be several records (chunks) of one call
    g.bytes = g.bytes + e.args.bytes
    g.dma_us = g.dma_us + e.dur
    local call = by_correlation[e.args.correlation]
    if call and not g.calls[e.args.correlation] then
      g.calls[e.args.correlation] = true
      g.call_us = g.call_us + call.dur
    end
  end
end
local rows = {}
for _, name in ipairs(order) do
  local g = groups[name]
  local calls = 0
  for _ in pairs(g.calls) do calls = calls + 1 end
  rows[#rows + 1] = {copy = name, calls = calls, records = g.copies, mb = g.bytes / 2 ^ 20, dma_gbps = g.bytes / (g.dma_us * 1e3),
    call_gbps = g.call_us > 0 and g.bytes / (g.call_us * 1e3) or nil, call_over_dma = g.call_us > 0 and g.call_us / g.dma_us or nil}
end
gpuexp.print_table(rows, {"copy", "calls", "records", "mb", "dma_gbps", "call_gbps", "call_over_dma"})
