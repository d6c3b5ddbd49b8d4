-- The one parser of command lines (lua/gpuexp/engine/args.lua), on a command of its own shape and
-- on the catalog's: each type, the messages of a bad line (unknown with did-you-mean, a missing
-- value, a bad value, an empty list), repeats, defaults, `--`, `-`, a script and its arguments,
-- and the options handed on.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local args = require("gpuexp.engine.args")

local why
local command = {name = "probe", options = {
  {"-o, --out PATH", "the output"},
  {"--count N", "", type = "integer", min = 1, max = 9},
  {"--ratio R", "", type = "number", above = 0},
  {"--wait S", "", type = "seconds"},
  {"--mode a|b", "", type = "choice", choices = {"a", "b"}, default = "a"},
  {"--cols A,B", "", type = "list", what = "at least one column (A,B)"},
  {"--tag T", "", repeatable = true},
  {"--no-check", "", field = "check", value = false, default = true},
  {"--json", "", field = "format", value = "json"},
  {"--markdown", "", field = "format", value = "markdown"},
  {"--pair K=V", "", type = "pair"},
  {"-d, --device N", "", what = "a GPU number", pass = true},
  {"--fast", "", pass = true},
  {"-h, --help", ""},
}}

-- the entry's flags, argument and field
local flags, argument = args.flags(command.options[1])
T.eq(table.concat(flags, " "), "-o --out", "flags")
T.eq(argument, "PATH", "argument")
T.eq(args.flags(command.options[14]) [2], "--help", "a flag's flags")
T.eq(select(2, args.flags(command.options[14])), nil, "a flag takes no argument")
T.eq(args.field(command.options[2]), "count", "field from the long flag")
T.eq(args.field(command.options[8]), "check", "field =")
T.eq(args.field({"--max-evals N", ""}), "max_evals", "- becomes _")

-- defaults, and nothing else, when nothing is given
local o = assert(args.parse(command, {}))
T.eq(o.mode, "a", "a default lands in its field")
T.eq(o.check, true, "a flag's default")
T.eq(o.count, nil, "no default: nil")
T.eq(#o.positional, 0, "no arguments")

-- every type, both spellings of a flag, arguments mixed with options
local types = {pair = function(_, text)
  local k, v = text:match("^(%w+)=(.*)$")
  if k then return {k, v} end
  return nil, "--pair takes K=V"
end}
o = assert(args.parse(command, {"x.csv", "-o", "out.csv", "--count", "3", "--ratio", "0.5", "--wait", "0",
  "--mode", "b", "--cols", " a, b ,", "--no-check", "--json", "--pair", "k=v=w", "y.csv", "--markdown"}, types))
T.eq(o.out, "out.csv", "-o sets out")
T.eq(math.type(o.count), "integer", "an integer is one")
T.eq(o.count, 3, "integer")
T.eq(o.ratio, 0.5, "number")
T.eq(o.wait, 0, "seconds: 0 is no limit")
T.eq(o.mode, "b", "choice")
T.eq(table.concat(o.cols, "|"), "a|b", "list: trimmed, empty items dropped")
T.eq(o.check, false, "a flag's value =")
T.eq(o.format, "markdown", "two flags of one field: the last counts")
T.eq(o.pair[1] .. "/" .. o.pair[2], "k/v=w", "a command's own type")
T.eq(table.concat(o.positional, " "), "x.csv y.csv", "arguments among the options")

-- repeats: the last one counts, a repeatable one keeps every value
o = assert(args.parse(command, {"--count", "2", "--count", "5", "--tag", "x", "--tag", "y"}))
T.eq(o.count, 5, "given twice: the last")
T.eq(table.concat(o.tag, ","), "x,y", "repeatable: every value, in order")

-- `--` ends the options; `-` alone is an argument
o = assert(args.parse(command, {"-", "--", "--count", "-o"}))
T.eq(table.concat(o.positional, " "), "- --count -o", "after --, options are arguments")

-- the messages of a bad line
local function refused(line, expected, what)
  local fields, why = args.parse(command, line, types)
  T.eq(fields, nil, what .. ": refused")
  T.eq(why, expected, what)
end
refused({"--cuont", "3"}, "unknown option '--cuont' (did you mean '--count'?)", "unknown, with a suggestion")
refused({"--zzzzzz"}, "unknown option '--zzzzzz'", "unknown, nothing near")
refused({"--count"}, "--count needs a whole number from 1 to 9", "a missing value")
refused({"--device"}, "--device needs a GPU number", "a missing value, in the entry's words")
refused({"--count", "10"}, "--count takes a whole number from 1 to 9, got '10'", "above max")
refused({"--count", "1.5"}, "--count takes a whole number from 1 to 9, got '1.5'", "not whole")
refused({"--ratio", "0"}, "--ratio takes a number > 0, got '0'", "not above")
refused({"--ratio", "nan"}, "--ratio takes a number > 0, got 'nan'", "not a number")
refused({"--wait", "-1"}, "--wait takes a number of seconds >= 0 (0: no limit), got '-1'", "negative seconds")
-- "inf" is no number to tonumber, but "1e309" reads as infinity: neither is a value
refused({"--ratio", "1e309"}, "--ratio takes a number > 0, got '1e309'", "an infinite number")
refused({"--ratio", "-1e309"}, "--ratio takes a number > 0, got '-1e309'", "a negative infinite number")
refused({"--wait", "1e309"}, "--wait takes a number of seconds >= 0 (0: no limit), got '1e309'", "infinite seconds")
refused({"--mode", "c"}, "--mode takes a or b, got 'c'", "not a choice")
refused({"--cols", " , "}, "--cols needs at least one column (A,B)", "an empty list")
refused({"--pair", "x"}, "--pair takes K=V", "a command type's own message")
refused({"-o", "a", "--count", "x", "--bogus"}, "--count takes a whole number from 1 to 9, got 'x'",
  "the first problem")

-- a command that takes a script: the first argument ends the options
local runner = {name = "runner", arguments = "script", options = command.options}
local fields, _, given = assert(args.parse(runner,
  {"-d", "1", "--fast", "--count", "2", "s.lua", "--count", "x", "-d"}))
T.eq(fields.script, "s.lua", "the script")
T.eq(fields.script_index, 6, "its index")
T.eq(table.concat(fields.script_args, " "), "--count x -d", "the script's arguments, as given")
T.eq(fields.count, 2, "options before the script")
T.eq(table.concat(args.passed(given), " "), "-d 1 --fast", "the options handed on, as typed")
T.eq(given[1].index, 2, "a value's index in the line")
T.eq(given[2].value, true, "a flag's value")

-- a subcommand (gpuexp history's): its own options and its command's, its words as arguments
local list = assert(args.subcommand("history", "list"), "history list")
o = assert(args.parse(list, {"--history", "h.sqlite", "--experiment", "e"}))
T.eq(o.history, "h.sqlite", "the command's option, after the subcommand")
T.eq(o.experiment, "e", "the subcommand's own")
T.eq(o.limit, 30, "the subcommand's default")
T.eq(args.subcommand("history", "include") ~= nil, true, "a subcommand sharing a line (also =)")
T.eq(args.subcommand("history", "nosuch"), nil, "no such subcommand")
_, why = args.parse(list, {"--limit", "0"})
T.eq(why, "--limit takes a whole number of runs >= 1, got '0'", "the subcommand's type")

-- the catalog's own commands: defaults land, and a run's value types are engine/options.lua's
o = assert(args.parse("compare", {"a.csv", "b.csv"}, {metric = function(_, t) return t end}))
T.eq(o.rule, "gpuexp", "compare --rule's default")
o = assert(args.parse("nightly", {"suite"}, {metric = function(_, t) return t end}))
T.eq(o.confirm, true, "nightly confirms by default")
T.eq(o.counters, true, "nightly collects counters by default")
o = assert(args.parse("run", {"--arch", "sm_90", "x.lua"}))
T.eq(o.point_timeout, 300, "--point-timeout's default")
T.eq(o.plan_arch, "sm_90", "-a, --arch sets plan_arch")
_, why = args.parse("run", {"--shard", "3/3", "x.lua"})
T.eq(why, "--shard takes I/N with 0 <= I < N (e.g. 0/4), got '3/3'", "a run's --shard: options.parse_shard")
_, why = args.parse("run", {"--point-timeout", "x", "x.lua"})
T.eq(why, "--point-timeout takes seconds >= 0 (0: no limit), got 'x'", "a run's --point-timeout")
_, why = args.parse("run", {"--point-timeout", "1e309", "x.lua"})
T.eq(why, "--point-timeout takes seconds >= 0 (0: no limit), got '1e309'", "infinite seconds are no timeout")
_, why = args.parse("compare", {"--threshold", "1e309", "a.csv", "b.csv"}, {metric = function(_, t) return t end})
T.ok(why and why:find("--threshold takes", 1, true), "compare --threshold 1e309 (which hid +50%) is refused: " ..
  tostring(why))
_, why = args.parse("run", {"--only", ";", "x.lua"})
T.eq(why, "--only names no point", "a run's --only")
T.done()
