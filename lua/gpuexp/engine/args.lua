-- The one parser of a command line: every command's options are its entries in
-- lua/gpuexp/catalog.lua (flags, argument, type, field, default: the shape is in the catalog's
-- header), and every command, the run included, gets them from here as a table of typed fields,
-- once (commands/runner.lua).
--
-- The syntax, as gpuexp has always taken it: `--name VALUE` and `-n VALUE` (never --name=VALUE),
-- flags alone, options and arguments in any order unless the command takes a script (then the first
-- argument that is not an option is the script and everything after it is the script's), `--` ends
-- the options, `-` alone is an argument. An option given twice: the last one counts, except a
-- repeatable one, whose field is the list of every value.
local catalog = require("gpuexp.catalog")
local run_options = require("gpuexp.engine.options")

local M = {}

-- The flags of an entry and its argument's name: "-o, --out PATH" -> {"-o", "--out"}, "PATH";
-- a flag has no argument (nil).
function M.flags(option)
  local flags, rest = {}, option[1]
  while true do
    local flag, after = rest:match("^%s*(%-%-?%a[%w-]*),?(.*)$")
    if not flag then break end
    flags[#flags + 1] = flag
    rest = after
  end
  rest = rest:match("^%s*(.-)%s*$")
  if rest:find("%.%.%.$") then return flags, nil end -- "--check NAME...": the names are arguments
  return flags, rest ~= "" and rest or nil
end

-- The field an entry sets: its field =, else its long flag's name ("--max-evals" -> "max_evals").
function M.field(option)
  if option.field then return option.field end
  local flags = M.flags(option)
  local long = flags[#flags]
  return (long:gsub("^%-+", ""):gsub("-", "_"))
end

local function bounds(option, text)
  if option.min and option.max then return string.format("%s from %s to %s", text, option.min, option.max) end
  if option.above then return text .. " > " .. option.above end
  if option.min then return text .. " >= " .. option.min end
  return text
end

-- What an option's value is, in words, for its messages ("a number >= 0").
function M.what(option)
  if option.what then return option.what end
  local kind = option.type
  if kind == "number" then return bounds(option, "a number") end
  if kind == "integer" then return bounds(option, "a whole number") end
  if kind == "seconds" then return "a number of seconds >= 0 (0: no limit)" end
  if kind == "choice" then
    return table.concat(option.choices, ", ", 1, #option.choices - 1) .. " or " .. option.choices[#option.choices]
  end
  if kind == "list" then return "a list (A,B)" end
  if kind == "path" then return "a path" end
  return "a value"
end

-- (a number is finite: "1e309" reads as infinity where "inf" is no number at all; neither is a value)
local function number_in_bounds(option, value)
  return value and value == value and value ~= math.huge and value ~= -math.huge and (not option.min or value >= option.min)
    and (not option.max or value <= option.max) and (not option.above or value > option.above)
end

-- The value types: (entry, text, flag) -> value, or nil (the message says what was wanted) and,
-- optionally, why.
M.types = {
  -- never empty: `--history ''` recorded into the default history, as if it were not given
  string = function(_, text, flag) if text ~= "" then return text end return nil, flag .. " needs a value, got ''" end,
  path = function(_, text, flag) -- '' names no file: it never means "the default"
    if text ~= "" then return text end
    return nil, flag .. " takes a path, got '' (an empty name names no file)"
  end,
  number = function(option, text)
    local value = tonumber(text)
    if number_in_bounds(option, value) then return value end
  end,
  integer = function(option, text)
    local value = math.tointeger(tonumber(text))
    if number_in_bounds(option, value) then return value end
  end,
  seconds = function(_, text)
    local value = tonumber(text)
    if value and value == value and value >= 0 and value < math.huge then return value end
  end,
  choice = function(option, text)
    for _, choice in ipairs(option.choices) do if choice == text then return text end end
  end,
  list = function(_, text)
    local list = {}
    for item in text:gmatch("[^,]+") do
      item = item:match("^%s*(.-)%s*$")
      if item ~= "" then list[#list + 1] = item end
    end
    if #list > 0 then return list end
  end,
  -- an architecture, by the name the occupancy model knows it ("8.6" and "86" are "sm_86")
  arch = function(_, text)
    local ok, limits = pcall(gpuexp.arch_limits, text)
    if ok then return limits.arch end
    local hint = gpuexp._did_you_mean(text, gpuexp.arch_limits())
    return nil, "unknown architecture '" .. text .. "'" .. (hint ~= "" and hint or " (gpuexp occupancy --limits lists them)")
  end,
  -- a run's own: --point-timeout, --shard and --only (engine/options.lua)
  timeout = function(_, text) return run_options.parse_point_timeout(text) end,
  shard = function(_, text) return run_options.parse_shard(text) end,
  only = function(_, text) return run_options.parse_only(text) end,
}

-- A command's catalog entry: by name, or the entry itself (a test's own).
local function command_of(command)
  if type(command) == "table" then return command end
  local found = catalog.find(command)
  assert(found, "no command '" .. tostring(command) .. "' in the catalog")
  return found
end

-- A command's options by flag: {flag -> {option =, field =, argument =}}, built once per command.
local tables = setmetatable({}, {__mode = "k"})
local function option_table(command)
  if tables[command] then return tables[command] end
  local by_flag = {}
  for _, option in ipairs(command.options or {}) do
    local flags, argument = M.flags(option)
    if #flags > 0 then -- (a subcommand's line has none: "list [--limit N]")
      local entry = {option = option, field = M.field(option), argument = argument}
      for _, flag in ipairs(flags) do by_flag[flag] = entry end
    end
  end
  tables[command] = by_flag
  return by_flag
end

-- "unknown option '--treshold' (did you mean '--threshold'?)": the likely one from the command's
-- entries (gpuexp._did_you_mean).
function M.unknown(command, flag)
  local names = {}
  for name in pairs(option_table(command_of(command))) do names[#names + 1] = name end
  table.sort(names)
  local suggest = rawget(_G, "gpuexp") and gpuexp._did_you_mean
  return "unknown option '" .. flag .. "'" .. (suggest and suggest(flag, names) or "")
end

-- One option's value from its text, or nil and the message.
local function convert(entry, flag, text, types)
  local option = entry.option
  local kind = option.type or "string"
  local parse = (types and types[kind]) or M.types[kind]
  assert(parse, "option " .. flag .. " has an unknown type '" .. kind .. "'")
  local value, why = parse(option, text, flag)
  if value == nil and kind == "list" then return nil, flag .. " needs " .. M.what(option) end -- an empty list
  if value == nil then return nil, why or (flag .. " takes " .. M.what(option) .. ", got '" .. text .. "'") end
  return value
end

-- The defaults of the options, read by their types as if typed (--point-timeout's default 300 is
-- the value --point-timeout 300 gives).
local function defaults(command, types)
  local fields = {}
  for _, option in ipairs(command.options or {}) do
    local flags, argument = M.flags(option)
    if option.default ~= nil and #flags > 0 then
      local value = option.default
      if argument and type(value) ~= "boolean" then
        local why
        value, why = convert({option = option}, flags[#flags], tostring(value), types)
        assert(value ~= nil, "the catalog's default of " .. flags[#flags] .. " is not of its type: " .. tostring(why))
      end
      fields[M.field(option)] = value
    end
  end
  return fields
end

-- Parses args (args[1..]: what follows the command's name) by the command's catalog entries (the
-- command by name, or an entry of the catalog's shape).
-- Returns the fields (every option given, by its field, typed; the defaults of those not given;
-- fields.positional: the other arguments; with a script, fields.script, fields.script_args and
-- fields.script_index), nil and the message on a usage error, and as a third value the options
-- given, in order ({flag =, field =, value =, text =, index =}: text and index those of the value as
-- typed, value as parsed).
-- types: the command's own value types by name (type = "metric" -> types.metric(option, text)).
function M.parse(command, args, types)
  command = command_of(command)
  local by_flag = option_table(command)
  local takes_script = command.arguments == "script"
  local fields, given, positional, listed = defaults(command, types), {}, {}, {}
  local i, only_arguments = 1, false
  while i <= #args do
    local a = args[i]
    if not only_arguments and a == "--" then
      only_arguments = true
    elseif not only_arguments and a:sub(1, 1) == "-" and a ~= "-" then
      local entry = by_flag[a]
      if not entry then return nil, M.unknown(command, a) end
      local option, value, text, index = entry.option, nil, nil, nil
      if entry.argument then
        index = i + 1
        text = args[index]
        if text == nil then return nil, a .. " needs " .. M.what(option) end
        local why
        value, why = convert(entry, a, text, types)
        if value == nil then return nil, why end
        i = index
      elseif option.value ~= nil then
        value = option.value
      else
        value = true
      end
      if option.repeatable then
        if not listed[entry.field] then listed[entry.field] = true; fields[entry.field] = {} end
        table.insert(fields[entry.field], value)
      else
        fields[entry.field] = value
      end
      given[#given + 1] = {flag = a, field = entry.field, text = text, index = index, value = value, pass = option.pass}
    elseif takes_script then
      fields.script, fields.script_index = a, i
      fields.script_args = {table.unpack(args, i + 1)}
      break
    else
      positional[#positional + 1] = a
    end
    i = i + 1
  end
  fields.positional = positional
  fields.script_args = fields.script_args or {}
  return fields, nil, given
end

-- A subcommand's entry (gpuexp history's list, export, ...: an entry of the command with
-- subcommand = NAME, or also = NAME, and the subcommand's own options), with the command's own
-- options (history's --history) beside its own; nil when the command has no such subcommand.
function M.subcommand(command, name)
  command = command_of(command)
  local entry, found = {name = command.name .. " " .. name, options = {}}, false
  for _, option in ipairs(command.options or {}) do
    if option.subcommand == name or option.also == name then
      found = true
      for _, own in ipairs(option.options or {}) do entry.options[#entry.options + 1] = own end
    elseif option.subcommand == nil and #M.flags(option) > 0 then
      entry.options[#entry.options + 1] = option
    end
  end
  return found and entry or nil
end

-- The options marked pass = true among those given, as typed: the command line a command hands on
-- to the runs it starts (gpuexp tune's, bisect's, ab's).
function M.passed(given)
  local list = {}
  for _, g in ipairs(given) do
    if g.pass then
      list[#list + 1] = g.flag
      if g.text then list[#list + 1] = g.text end
    end
  end
  return list
end

return M
