-- The Trace Event Format (Chrome, Perfetto) as gpuexp writes it: a JSON array of events; complete
-- events ("X") with a name, a category, integer pid and tid, ts and dur in microseconds (numbers,
-- ts >= 0, dur >= 0) and an args object; metadata events ("M") naming processes and threads.
-- check(text) -> events, or nil and the first problem.
local cjson = require("cjson")
local M = {}

local function integer(v) return type(v) == "number" and math.type(v) == "integer" or (type(v) == "number" and v == math.floor(v)) end

function M.check(text)
  local ok, events = pcall(cjson.decode, text)
  if not ok then return nil, "not JSON: " .. tostring(events) end
  if type(events) ~= "table" or (next(events) ~= nil and events[1] == nil) then return nil, "not a JSON array" end
  for i, e in ipairs(events) do
    local where = "event " .. i
    if type(e) ~= "table" then return nil, where .. " is not an object" end
    if e.ph == "X" then
      if type(e.name) ~= "string" or e.name == "" then return nil, where .. ": no name" end
      if type(e.cat) ~= "string" then return nil, where .. ": no category" end
      if not integer(e.pid) or not integer(e.tid) then return nil, where .. ": pid and tid must be integers" end
      if type(e.ts) ~= "number" or e.ts < 0 then return nil, where .. ": ts must be a number >= 0" end
      if type(e.dur) ~= "number" or e.dur < 0 then return nil, where .. ": dur must be a number >= 0" end
      if type(e.args) ~= "table" then return nil, where .. ": args must be an object" end
    elseif e.ph == "M" then
      if e.name ~= "process_name" and e.name ~= "thread_name" then return nil, where .. ": unknown metadata " .. tostring(e.name) end
      if type(e.args) ~= "table" or type(e.args.name) ~= "string" then return nil, where .. ": metadata without args.name" end
      if not integer(e.pid) or not integer(e.tid) then return nil, where .. ": pid and tid must be integers" end
    else
      return nil, where .. ": phase " .. tostring(e.ph) .. " is not one gpuexp writes"
    end
  end
  return events
end

return M
