local x = 1
local function f()
  error("something went wrong") end
f()
