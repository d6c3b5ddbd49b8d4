-- One figure recomputed from a raw record, as bench/claims/*.tsv's recompute commands call it:
--   gx bench/recompute/figure.lua FORMAT EXPRESSION
-- EXPRESSION is Lua over the readers below, FORMAT a string.format format for its values (%s for
-- text); the figure is printed alone. The record is $RECORD (the claim's first record path; $RECORD2,
-- ... the others), read from the repository root. A path "ARCHIVE.tgz:MEMBER" reads one member of a
-- compressed record. The expressions are the inventory's, never data's: nothing read is executed.
--   csv(path)          the rows of a CSV (a table of text cells by column name), in order
--   printed(path[, first]) the rows of a table gpuexp printed (right-aligned columns under a header
--                      line: the file's first, or the first whose first word is `first`)
--   line(path, pat)    the captures of the first line matching a Lua pattern (numbers as numbers)
--   lines(path, pat)   the first capture of every line matching, as a list
--   captures(path, pat) every matching line's captures, as a list of lists
--   text(path)         the whole file
--   section(path, pat) a name the readers take for a path: the file from the first line matching
--                      pat to the next line starting with "#" (one run of a record of several)
--   row(rows, where)   the one row whose cells equal where's (a table), an error when not one
--   pick(rows, where)  the rows whose cells equal where's
--   col(rows, name)    one column of rows, as numbers
--   count(rows, fn)    how many rows fn(row) is true for; keep(rows, fn) those rows
--   maxof(rows, fn), minof(rows, fn), list(rows, fn): over fn(row) of each row
--   groups(rows, key)  rows grouped by a function of the row (a table of lists)
--   median, mean, min, max, sum (of a list), ratio(a, b) = a / b, pct(a, b) = 100 * (a / b - 1)
-- A path left out (nil) is $RECORD.
local format, expression = arg[1], arg[2]
local env = dofile(gpuexp.script_dir .. "/records.lua")
local records = env.records
if not format or not expression then
  io.stderr:write("usage: gx bench/recompute/figure.lua FORMAT EXPRESSION\n")
  os.exit(2)
end
local chunk, problem = load("return " .. expression, "=expression", "t", env)
if not chunk then
  io.stderr:write("figure.lua: " .. problem .. "\n")
  os.exit(2)
end
local values = table.pack(chunk())
for k = 1, values.n do
  if type(values[k]) == "table" then values[k] = table.concat(values[k], ", ") end
end
print((string.format(format, table.unpack(values, 1, values.n))))
