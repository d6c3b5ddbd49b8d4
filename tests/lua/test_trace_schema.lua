-- The timeline's format, without a GPU: the trace recorded on an H200 (bench/h200/trace/) passes
-- the Trace Event Format checks and holds what the transfer study needs (pageable and pinned copies
-- in both directions, with bytes; the driver calls beside them); broken traces are refused.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local schema = dofile(gpuexp.script_dir .. "/../trace/schema.lua")
local file = assert(io.open(gpuexp.script_dir .. "/../../bench/h200/trace/transfer_64mb.json"))
local text = file:read("a")
file:close()
local events, why = schema.check(text)
T.ok(events, "the recorded trace follows the format: " .. tostring(why))
local seen = {}
for _, e in ipairs(events) do
  if e.ph == "X" then seen[e.name] = (seen[e.name] or 0) + 1 end
end
for _, name in ipairs({"memcpy HtoD pageable to device", "memcpy DtoH device to pageable", "memcpy HtoD pinned to device",
  "memcpy DtoH device to pinned"}) do
  T.ok(seen[name] and seen[name] >= 20, name .. " events: " .. tostring(seen[name]))
end
local driver_calls = 0
for _, e in ipairs(events) do if e.cat == "driver" then driver_calls = driver_calls + 1 end end
T.ok(driver_calls > 0, "driver calls are in the trace")
-- broken traces
T.eq(select(2, schema.check('[{"ph":"X","name":"k","cat":"kernel","pid":1,"tid":1,"ts":-1,"dur":2,"args":{}}]')),
  "event 1: ts must be a number >= 0", "a negative time")
T.eq(select(2, schema.check('[{"ph":"X","name":"k","cat":"kernel","pid":"gpu","tid":1,"ts":1,"dur":2,"args":{}}]')),
  "event 1: pid and tid must be integers", "a string pid")
T.ok(not schema.check('[{"ph":"X"'), "a cut file")
T.done()
