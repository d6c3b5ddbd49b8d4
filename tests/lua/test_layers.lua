-- The house's layers, read from the sources: src/ reads cli -> bindings -> core (core never
-- includes lua.h nor a binding's header, bindings never a cli header), and lua/gpuexp/ reads
-- commands -> api -> engine -> store, with judge (compare and its rule) beside the engine over
-- the store; catalog.lua (commands, options, exit codes: plain data) is read by all. A require or #include that points back up fails here, naming the file and line,
-- and so does a circle inside one layer (binding files, core files or Lua modules that need each other), naming each step.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local root = gpuexp.script_dir .. "/../.."

local function files(folder, pattern)
  local list = {}
  local pipe = io.popen(string.format("cd '%s' && find %s -type f -name '%s' | sort", root, folder, pattern))
  for path in pipe:lines() do list[#list + 1] = path end
  pipe:close()
  T.ok(#list > 0, "files in " .. folder)
  return list
end

local function lines(path)
  local file = assert(io.open(root .. "/" .. path))
  local text = file:read("a")
  file:close()
  local n, list = 0, {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do n = n + 1; list[n] = line end
  return list
end

-- Lua: which layers each may require
local allowed = {
  store = {store = true},
  judge = {store = true, judge = true},
  engine = {store = true, engine = true},
  api = {store = true, engine = true, api = true, judge = true}, -- tune's tie set and ab's verdict are judgments
  commands = {store = true, judge = true, engine = true, api = true, commands = true, init = true},
  init = {store = true, api = true},
  main = {store = true, judge = true, engine = true, api = true, commands = true, init = true},
  catalog = {}, -- plain data (the commands, options and exit codes): every layer may read it
}
for _, may in pairs(allowed) do may.catalog = true; may.catalog_text = true end
local found = {}
for _, path in ipairs(files("lua/gpuexp", "*.lua")) do
  local layer = path:match("^lua/gpuexp/([%w_]+)/") or path:match("^lua/gpuexp/(init)%.lua$")
    or path:match("^lua/gpuexp/(main)%.lua$")
    or path:match("^lua/gpuexp/(catalog)%.lua$") or path:match("^lua/gpuexp/(catalog)_text%.lua$")
  T.ok(allowed[layer], path .. " is in a layer's folder (store, judge, engine, api, commands)")
  for n, line in ipairs(lines(path)) do
    for target in line:gmatch('require%("gpuexp%.([%w_]+)') do
      found[#found + 1] = path
      T.ok(allowed[layer][target], string.format("%s:%d: the %s layer requires gpuexp.%s", path, n, layer, target))
    end
  end
end
T.ok(#found > 20, "requires were found")

-- C: core <- bindings <- cli
local headers = {}
for _, folder in ipairs({"core", "bindings", "cli"}) do
  for _, path in ipairs(files("src/" .. folder, "*.h")) do headers[path:match("[^/]+$")] = folder end
end
local may_include = {core = {core = true}, bindings = {core = true, bindings = true},
  cli = {core = true, bindings = true, cli = true}}
-- every #include of src/, by file: {folder, path, list = {{included, name, line}...}}
local includes_of = {}
for _, folder in ipairs({"core", "bindings", "cli"}) do
  for _, pattern in ipairs({"*.c", "*.h"}) do
    for _, path in ipairs(files("src/" .. folder, pattern)) do
      local list = {}
      for n, line in ipairs(lines(path)) do
        local included = line:match('^%s*#%s*include%s*[<"]([^>"]+)[>"]')
        if included then list[#list + 1] = {included = included, name = included:match("[^/]+$"), line = n} end
      end
      includes_of[path:match("[^/]+$")] = {folder = folder, path = path, list = list}
    end
  end
end
for _, entry in pairs(includes_of) do
  local folder, path = entry.folder, entry.path
  for _, include in ipairs(entry.list) do
    local name, included, n = include.name, include.included, include.line
    if folder == "core" then
      T.ok(not name:match("^lua") and not name:match("^lauxlib") and name ~= "lualib.h",
        string.format("%s:%d: the core includes Lua (%s)", path, n, included))
    end
    local owner = headers[name]
    T.ok(not owner or may_include[folder][owner],
      string.format("%s:%d: %s includes %s of the %s layer", path, n, folder, included, owner))
  end
end

-- A private header (X_internal.h, shared by a few files) includes none of its users' headers
-- (gx_cupti_internal.h is included by gx_metric.c, so it may not include gx_metric.h): each user
-- includes its own.
for header, entry in pairs(includes_of) do
  if header:match("_internal%.h$") then
    for _, included in ipairs(entry.list) do
      local user = includes_of[(included.name:gsub("%.h$", ".c"))]
      for _, back in ipairs(user and user.list or {}) do
        T.ok(back.name ~= header, string.format("%s:%d: %s includes %s, the header of its user %s",
          entry.path, included.line, header, included.name, user.path))
      end
    end
  end
end

-- One Lua state per process: made once, in main.c (no throwaway state parses the command line or
-- reads the catalog or a preset), and nothing under src/ but main.c makes one.
local states = {}
for _, folder in ipairs({"core", "bindings", "cli"}) do
  for _, path in ipairs(files("src/" .. folder, "*.c")) do
    for n, line in ipairs(lines(path)) do
      if line:find("lua_newstate%s*%(") or line:find("luaL_newstate%s*%(") then states[#states + 1] = path .. ":" .. n end
    end
  end
end
T.eq(#states, 1, "one place makes a Lua state: " .. table.concat(states, ", "))
T.ok(states[1] and states[1]:find("^src/cli/main%.c:"), "and it is main.c: " .. tostring(states[1]))

-- Which functions each C file defines and calls, by a prefix (l_ for the bindings, gx_ for the core).
local function call_graph(paths, prefix, shared)
  local defined, calls = {}, {}
  for _, path in ipairs(paths) do
    local text = "\n" .. table.concat(lines(path), "\n")
    for name in text:gmatch("\n[%a_][%w_ %*]-%f[%w_](" .. prefix .. "[%w_]+)%s*%b()%s*\n?{") do defined[name] = path end
    calls[path] = {}
    for name in text:gmatch("%f[%w_](" .. prefix .. "[%w_]+)%s*%(") do calls[path][name] = true end
  end
  T.ok(next(defined) ~= nil, "the functions named " .. prefix .. "* were found")
  local edges = {}
  for path, called in pairs(calls) do
    edges[path] = {}
    for name in pairs(called) do
      local owner = defined[name]
      if owner and owner ~= path and not (shared and shared(owner)) then edges[path][owner] = name end
    end
  end
  return edges
end

-- Fails on the first circle in edges (file -> {file -> why}), naming every step of it.
local function no_circle(edges, what)
  local state, stack = {}, {}
  local function visit(from)
    state[from] = "open"
    stack[#stack + 1] = from
    local targets = {}
    for target in pairs(edges[from] or {}) do targets[#targets + 1] = target end
    table.sort(targets)
    for _, target in ipairs(targets) do
      if state[target] == "open" then
        local steps, inside = {}, false
        for _, file in ipairs(stack) do
          inside = inside or file == target
          if inside then steps[#steps + 1] = file end
        end
        steps[#steps + 1] = target
        local text = {}
        for i = 1, #steps - 1 do text[i] = string.format("%s -> %s (%s)", steps[i], steps[i + 1], edges[steps[i]][steps[i + 1]]) end
        T.ok(false, string.format("no circle %s: %s", what, table.concat(text, ", ")))
      elseif not state[target] then
        visit(target)
      end
    end
    stack[#stack] = nil
    state[from] = "done"
  end
  local sources = {}
  for from in pairs(edges) do sources[#sources + 1] = from end
  table.sort(sources)
  for _, from in ipairs(sources) do if not state[from] then visit(from) end end
end

-- the binding files call each other in one direction only, every file counted (l_util.c's helpers
-- and l_gpuexp.c, which opens every type, too): no circle such as buffer -> device -> buffer
no_circle(call_graph(files("src/bindings", "l_*.c"), "l_"), "between the binding files")

-- the core's files call each other in one direction only: no circle such as cupti -> metric -> cupti
no_circle(call_graph(files("src/core", "gx_*.c"), "gx_"), "between the core's files")

-- nor do the Lua modules require each other in a circle, even lazily inside a function
local requires = {}
for _, path in ipairs(files("lua/gpuexp", "*.lua")) do
  requires[path] = {}
  for n, line in ipairs(lines(path)) do
    for module in line:gmatch('require%("(gpuexp%.[%w_%.]+)"%)') do
      local target = "lua/" .. module:gsub("%.", "/") .. ".lua"
      if target ~= path then requires[path][target] = string.format("%s:%d", path, n) end
    end
  end
end
no_circle(requires, "between the Lua modules")
T.done()
