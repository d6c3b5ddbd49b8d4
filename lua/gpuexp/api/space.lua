-- A tune's space: the configurations of a sweep's axes that pass its `where` filter, each named by
-- its cartesian index (1 .. the product of the axes' sizes, the last axis varying fastest: a sweep's
-- order). A space of at most M.ENUMERATE cartesian points is walked once and its configurations
-- listed; a larger one is lazy: the filter is applied to a configuration when a strategy draws or
-- reaches it, so 10^7 configurations cost no memory and no time until they are used. The search
-- strategies (api/search.lua) see only this interface:
--   space.count        the number of configurations (nil for a lazy space: space.estimate())
--   space.total        the cartesian product (an upper bound)
--   space.sizes        each axis' number of values
--   space.coords(i)    a configuration's value positions, one per axis
--   space.at(coords)   the configuration at these positions, or nil (outside the filter)
--   space.draw(rng)    a uniformly drawn configuration, or nil when M.DRAW_TRIES draws all failed
--   space.each()       an iterator over the configurations in order
-- and api/tune.lua also space.point(i), space.index_of(point), space.key(i).
local csv = require("gpuexp.store.csv")
local result_store = require("gpuexp.store.result")
local sweep = require("gpuexp.api.sweep")

local M = {}

M.ENUMERATE = 200000  -- cartesian points up to which a space is listed whole
M.DRAW_TRIES = 20000  -- draws before a lazy space's filter is taken to leave nothing to draw
M.MAX_TOTAL = 2 ^ 53  -- cartesian points at most (an index is a whole number a double holds exactly)

-- The mixed-radix digits of a cartesian index (1-based positions), the last axis fastest.
local function decode(index, sizes)
  local coords, rest = {}, index - 1
  for a = #sizes, 1, -1 do
    coords[a] = rest % sizes[a] + 1
    rest = rest // sizes[a]
  end
  return coords
end

local function encode(coords, sizes)
  local index = 0
  for a = 1, #sizes do
    local c = coords[a]
    if math.type(c) ~= "integer" or c < 1 or c > sizes[a] then return nil end
    index = index * sizes[a] + (c - 1)
  end
  return index + 1
end

-- M.new(axes, where) -> space. axes as gpuexp.sweep's ({name, {values...}} pairs).
function M.new(axes_given, where)
  local axes = sweep.normalize_axes(axes_given)
  local sizes, total, position = {}, 1, {}
  for a, axis in ipairs(axes) do
    sizes[a] = #axis.values
    if total > M.MAX_TOTAL / sizes[a] then
      gpuexp.error("usage", string.format("tune: the axes' product is over 2^53 configurations (at axis '%s'); " ..
        "split the space into several tunes", axis.name))
    end
    total = total * sizes[a]
    position[a] = {}
    for v, value in ipairs(axis.values) do position[a][csv.format_value(value)] = v end
  end
  local space = {axes = axes, sizes = sizes, total = total}

  function space.point(index)
    local coords, point = decode(index, sizes), {}
    for a, axis in ipairs(axes) do point[axis.name] = axis.values[coords[a]] end
    return point
  end
  function space.coords(index) return decode(index, sizes) end
  local function passes(index)
    if not where then return true end
    return where(sweep.strict_point(space.point(index), axes)) and true or false
  end
  function space.key(index)
    local coords, cells = decode(index, sizes), {}
    for a, axis in ipairs(axes) do cells[a] = csv.format_value(axis.values[coords[a]]) end
    return result_store.key(cells)
  end
  -- the cartesian index of a point (a table of axis values), whether or not the filter keeps it
  local function cartesian(point)
    local coords = {}
    for a, axis in ipairs(axes) do
      local value = point[axis.name]
      coords[a] = value ~= nil and position[a][csv.format_value(value)] or nil
      if not coords[a] then return nil end
    end
    return encode(coords, sizes)
  end

  if total <= M.ENUMERATE then
    local list, member = {}, {}
    for index = 1, total do
      if passes(index) then list[#list + 1] = index; member[index] = true end
    end
    space.count, space.list = #list, list
    function space.valid(index) return member[index] == true end
    function space.draw(rng) if #list > 0 then return list[rng.int(#list)] end end
    function space.each()
      local i = 0
      return function() i = i + 1; return list[i] end
    end
  else
    space.lazy = true
    space.valid = passes
    function space.draw(rng)
      for _ = 1, M.DRAW_TRIES do
        local index = rng.int(total)
        if passes(index) then return index end
      end
      return nil
    end
    function space.each()
      local index = 0
      return function()
        while index < total do
          index = index + 1
          if passes(index) then return index end
        end
      end
    end
  end
  function space.at(coords)
    local index = encode(coords, sizes)
    if index and space.valid(index) then return index end
  end
  function space.index_of(point)
    local index = cartesian(point)
    if index and space.valid(index) then return index end
  end
  -- the number of configurations: counted, or estimated from 2,000 draws of the product (lazy; rng:
  -- a generator of api/search.lua, seeded the same each time so that the estimate is)
  function space.estimate(rng)
    if space.count then return space.count end
    if not space.estimated then
      local hits, tries = 0, 2000
      for _ = 1, tries do if passes(rng.int(total)) then hits = hits + 1 end end
      space.estimated = math.max(1, math.floor(total * hits / tries + 0.5))
    end
    return space.estimated
  end
  return space
end

-- M.list(count, coords, sizes) -> a space of configurations 1..count with these value positions
-- (the strategies' tests and replays, which have no axes; without coords, one position each).
function M.list(count, coords, sizes)
  if not coords then -- no positions given: each configuration its own on one axis
    coords, sizes = {}, {count}
    for i = 1, count do coords[i] = {i} end
  end
  local at = {}
  for i = 1, count do at[table.concat(coords[i], ",")] = i end
  local list = {}
  for i = 1, count do list[i] = i end
  return {count = count, total = count, sizes = sizes, list = list,
    coords = function(index) return coords[index] end,
    at = function(c) return at[table.concat(c, ",")] end,
    valid = function(index) return index >= 1 and index <= count end,
    draw = function(rng) if count > 0 then return rng.int(count) end end,
    each = function()
      local i = 0
      return function() i = i + 1; if i <= count then return i end end
    end,
    estimate = function() return count end}
end

return M
