-- One escaper per text format that a name from data reaches (a sweep, axis, point or column name,
-- a CSV cell, an error message: all written by others on other hosts). Each turns any byte string
-- into text that the format shows as those characters and never reads as markup or as a command:
-- valid UTF-8 (bad bytes become U+FFFD), no control characters that could start a new line, a new
-- command or a terminal escape. The CSV writer quotes (store/csv.lua) and the JSON writer escapes
-- (store/json.lua) by themselves; tests/lua/test_escaping.lua runs every escaper on one list of
-- hostile names.
local json = require("gpuexp.store.json")

local M = {}

local valid_utf8 = json.valid_utf8

-- The format characters that reorder or break a line where they are shown: the bidirectional
-- controls (U+061C, U+200E/200F, U+202A..202E, U+2066..2069: "Trojan Source" text reads in another
-- order than it is) and the line and paragraph separators (U+2028/2029: a new line to a browser or
-- an editor), as UTF-8; each is shown as its \uXXXX in every format.
local FORMAT_CHARACTERS = {"\216\156", "\226\128[\142\143\168-\174]", "\226\129[\166-\169]"}
local function visible_format_characters(text)
  for _, pattern in ipairs(FORMAT_CHARACTERS) do
    text = text:gsub(pattern, function(c) return string.format("\\u%04x", utf8.codepoint(c)) end)
  end
  return text
end

-- C1 controls (U+0080..U+009F, as UTF-8) shown as \uXXXX
local function visible_c1(text)
  return (text:gsub("\194([\128-\159])", function(c) return string.format("\\u%04x", c:byte()) end))
end

-- Any byte string as valid UTF-8 with its format characters shown (the start of every escaper).
local function shown(value) return visible_format_characters(valid_utf8(tostring(value))) end

-- C0 controls but tab and newline, DEL, and C1 controls (U+0080..U+009F, as UTF-8)
local function without_controls(text, replacement)
  return (text:gsub("[\0-\8\11-\31\127]", replacement):gsub("\194[\128-\159]", replacement))
end

-- Terminal text (tables, messages, every name a printer writes to a terminal): one line, every
-- control character shown as \n, \r, \t or \xHH, C1 controls and the format characters as \uXXXX,
-- so a name cannot move the cursor, clear the screen, retitle the window, reorder what is shown or
-- forge a line of output.
function M.terminal(value)
  local text = shown(value):gsub("[\0-\31\127]", function(c)
    return c == "\n" and "\\n" or c == "\r" and "\\r" or c == "\t" and "\\t" or string.format("\\x%02x", c:byte())
  end)
  return visible_c1(text)
end

-- M.format(format, ...) -> string.format(format, ...) with every string argument shown as terminal
-- text: the one way a printer puts names into a line for the terminal.
function M.format(format, ...)
  local values = table.pack(...)
  for i = 1, values.n do
    if type(values[i]) == "string" then values[i] = M.terminal(values[i]) end
  end
  return string.format(format, table.unpack(values, 1, values.n))
end

-- A message for standard error (several lines may be): as terminal text, with its new lines and
-- tabs kept.
function M.message(value)
  local text = shown(value):gsub("[\0-\8\11-\31\127]", function(c) return string.format("\\x%02x", c:byte()) end)
  return visible_c1(text)
end

-- M.width(text): the columns a terminal text takes (its UTF-8 characters).
function M.width(value) return utf8.len(value) or #value end

-- M.cut(text, columns) -> a terminal text of at most columns characters: itself when it fits, else
-- its start, "..." and 6 hex digits of the whole text's hash, so two long names that begin alike
-- stay two names in a table (point a=1,...,z=1 and point a=1,...,z=2).
function M.cut(value, columns)
  if M.width(value) <= columns then return value end
  return value:sub(1, utf8.offset(value, columns - 8) - 1) .. "..." .. gpuexp.hash(value):sub(1, 6)
end

-- M.pad(text, width, left): text padded with spaces to width columns, on the right when left
-- (string.format's %-Ns takes no width past 99: a 300-character name would raise).
function M.pad(value, width, left)
  local room = string.rep(" ", math.max(0, width - M.width(value)))
  return left and (value .. room) or (room .. value)
end

-- HTML character data or an attribute value (either quote).
function M.html(value)
  return (without_controls(shown(value), ""):gsub("[&<>\"']", {["&"] = "&amp;", ["<"] = "&lt;",
    [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;"}))
end

-- XML character data or an attribute value (JUnit, SVG): as HTML, with XML's entity for a quote
-- and no character XML 1.0 forbids.
function M.xml(value)
  return (without_controls(shown(value), ""):gsub("[\t\n]", " "):gsub("[&<>\"']", {["&"] = "&amp;",
    ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;"}))
end

-- Markdown inline text (a table cell, a heading, a list item): rendered as the characters it
-- holds, wherever a CI system renders Markdown as HTML. HTML is escaped as entities (no raw tag
-- reaches the page), the inline Markdown characters are backslash-escaped (no link, image,
-- emphasis, code span, strike-through or table cell border), and a new line becomes a space.
function M.markdown(value)
  local text = without_controls(shown(value), " "):gsub("[\t\r\n]", " ")
  local plain = text
  text = text:gsub("()([\\`*_%[%]|~!])", function(at, c)
    -- an underscore inside a word (median_ms) is no emphasis in CommonMark: left as it reads
    if c == "_" and plain:sub(at - 1, at - 1):match("%w") and plain:sub(at + 1, at + 1):match("%w") then return c end
    return "\\" .. c
  end)
  return (text:gsub("[&<>\"]", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;"}))
end

-- A word of a POSIX shell command line, as a user would copy it ("finish the run with: ...", the
-- hook nightly runs): as it is when it holds only characters no shell reads specially, else in
-- single quotes (a quote inside as '\''). Every command line gpuexp prints or runs through a shell.
function M.shell(value)
  local word = tostring(value)
  if word:match("^[%w%./_,:=+@%-]+$") then return word end
  return "'" .. word:gsub("'", "'\\''") .. "'"
end

-- A gnuplot string constant in single quotes: the quote doubled, no control character (a new
-- line would end the command and start the next one), valid UTF-8. Printed as written only with
-- the terminal's enhanced text mode off (api/plot.lua sets noenhanced).
function M.gnuplot(value)
  return "'" .. without_controls(shown(value), " "):gsub("[\t\r\n]", " "):gsub("'", "''") .. "'"
end

return M
