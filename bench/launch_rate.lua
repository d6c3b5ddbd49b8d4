-- Launch rate of an empty kernel from a Lua loop: a bound launch (l:launch(), no per-call
-- parsing) and the table form (k:launch{...}). Peer: bench/launch_rate.c.
local launches = tonumber(arg[1]) or 200000
local rounds = tonumber(arg[2]) or 5
local dev = gpuexp.device()
local kernel = gpuexp.compile{source = 'extern "C" __global__ void empty() {}'}:kernel("empty")
local bound = kernel:bind{grid = 1, block = 32, args = {}}

local function median_rate(body)
  local rates = {}
  for r = 1, rounds do
    dev:synchronize()
    local start = gpuexp.clock()
    body()
    dev:synchronize()
    rates[r] = launches / (gpuexp.clock() - start)
  end
  return gpuexp.stats(rates).median
end

print(string.format("lua_bound_launches_per_second %.0f", median_rate(function()
  for _ = 1, launches do bound:launch() end
end)))
print(string.format("lua_table_launches_per_second %.0f", median_rate(function()
  local config = {grid = 1, block = 32, args = {}}
  for _ = 1, launches do kernel:launch(config) end
end)))
