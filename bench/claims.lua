-- A claim is its records: every figure README.md, docs/ and bench/RESULTS.md quote is a line of
-- bench/claims/*.tsv saying where the doc states it, the raw output in bench/ it came from and the
-- command that recomputes it from that output. This script checks each claim (the record is
-- there, the command gives the inventory's value, the doc still says it at its anchor) or rewrites
-- the docs' figures from their records (`update`, after a re-measurement).
--
--   gpuexp --quiet --no-plan bench/claims.lua [--root DIR] [check|update|list] [ID...]
--
-- ID: a claim's id or a Lua pattern matched against whole ids (none: every claim). Exit codes: 0
-- every claim checked (claims pending re-measurement listed), 1 a claim failed, 2 usage, 70 an
-- internal error. The format is in docs/development.md ("Benchmarks").
local root, mode, wanted = ".", "check", {}
local i = 1
while arg[i] do
  local word = arg[i]
  if word == "--root" then
    root = arg[i + 1] or error("--root needs a folder")
    i = i + 1
  elseif word == "check" or word == "update" or word == "list" then
    mode = word
  elseif word:sub(1, 1) == "-" then
    io.stderr:write("bench/claims.lua: unknown option " .. word .. "\n")
    os.exit(2)
  else
    wanted[#wanted + 1] = word
  end
  i = i + 1
end

local COLUMNS = {"id", "status", "doc", "anchor", "value", "record", "recompute", "field"}
local STATUSES = {kept = true, remeasure = true, ["not-kept"] = true}
-- what a recompute command may call: gx, the binary that runs this script on a Lua file, offline;
-- gtest NAME, the offline test tests/lua/NAME.lua run as ctest runs it (from the binary's folder)
local PRELUDE = 'gx() { "$GPUEXP" --quiet --no-plan "$@"; }\n' ..
  'gtest() { (cd "$(dirname "$GPUEXP")" && "$GPUEXP" --quiet --no-plan "$ROOT/tests/lua/$1.lua" "$GPUEXP"); }\n'

local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

local read = require("gpuexp.store.meta").read_all -- a whole file, or nil

local function write(path, text)
  local file = assert(io.open(path, "wb"))
  assert(file:write(text))
  assert(file:close())
end

local function exists(path) return os.execute("test -e " .. quote(path)) == true end

local function normalize(text) return (text:gsub("%s+", " ")) end

-- The inventory: every line of every bench/claims/*.tsv, in file order. A malformed line is an error
-- that names its file and line.
local function inventory()
  local claims, problems, seen = {}, {}, {}
  local pipe = assert(io.popen("cd " .. quote(root) .. " && ls bench/claims/*.tsv 2>/dev/null"))
  local files = {}
  for path in pipe:lines() do files[#files + 1] = path end
  pipe:close()
  if #files == 0 then problems[#problems + 1] = "no inventory: " .. root .. "/bench/claims/*.tsv" end
  for _, path in ipairs(files) do
    local number = 0
    for line in ((read(root .. "/" .. path) or "") .. "\n"):gmatch("([^\n]*)\n") do
      number = number + 1
      if line:find("%S") and not line:find("^#") then
        local fields = {}
        for field in (line .. "\t"):gmatch("([^\t]*)\t") do fields[#fields + 1] = field end
        local where = path .. ":" .. number
        if #fields ~= #COLUMNS then
          problems[#problems + 1] = string.format("%s: %d fields, expected %d (%s, tab-separated)", where, #fields,
            #COLUMNS, table.concat(COLUMNS, ", "))
        else
          local claim = {where = where}
          for k, name in ipairs(COLUMNS) do claim[name] = fields[k] end
          local _, holes = claim.anchor:gsub("{}", "")
          if not STATUSES[claim.status] then
            problems[#problems + 1] = where .. ": unknown status '" .. claim.status .. "' (kept, remeasure, not-kept)"
          elseif seen[claim.id] then
            problems[#problems + 1] = where .. ": id " .. claim.id .. " again (first at " .. seen[claim.id] .. ")"
          elseif holes ~= 1 then
            problems[#problems + 1] = where .. ": the anchor needs exactly one {} where the value stands"
          elseif claim.status ~= "not-kept" and (claim.record == "-" or claim.recompute == "-") then
            problems[#problems + 1] = where .. ": a " .. claim.status .. " claim needs its record and its recompute command"
          else
            seen[claim.id] = where
            claims[#claims + 1] = claim
          end
        end
      end
    end
  end
  return claims, problems
end

local function selected(claim)
  if #wanted == 0 then return true end
  for _, w in ipairs(wanted) do
    if claim.id == w or claim.id:find("^" .. w .. "$") then return true end
  end
  return false
end

local function records(claim)
  local list = {}
  for path in claim.record:gmatch("%S+") do list[#list + 1] = path end
  return list
end

local function missing_records(claim)
  local list = {}
  for _, path in ipairs(records(claim)) do
    if not exists(root .. "/" .. path) then list[#list + 1] = path end
  end
  return list
end

-- A recompute command's output, run once per distinct command and record: from the root, under sh,
-- with $GPUEXP (this binary), gx (it on a Lua file, offline) and $RECORD, $RECORD2, ... (the claim's
-- record paths). Its standard error is kept apart.
local outputs = {}
local function recompute(command, paths)
  local key = command .. "\0" .. table.concat(paths, " ")
  if outputs[key] then return outputs[key] end
  local env = "GPUEXP=" .. quote(gpuexp.executable) .. " ROOT=\"$PWD\""
  for k, path in ipairs(paths) do env = env .. " RECORD" .. (k == 1 and "" or k) .. "=" .. quote(path) end
  local errors = os.tmpname()
  local pipe = io.popen("cd " .. quote(root) .. " && " .. env .. " sh -c " ..
    quote(PRELUDE .. command) .. " 2>" .. quote(errors))
  local text = pipe:read("a")
  local ok, _, code = pipe:close()
  local stderr = read(errors) or ""
  os.remove(errors)
  local result = {text = text, fields = {}}
  if not ok then
    result.failure = string.format("the recompute command exited %s: %s", tostring(code),
      (stderr .. text):gsub("%s+$", ""):sub(-600))
  end
  for line in text:gmatch("[^\n]+") do
    local name, value = line:match("^(.-): (.*)$")
    if name and result.fields[name] == nil then result.fields[name] = value:gsub("%s+$", "") end
  end
  outputs[key] = result
  return result
end

-- The value a claim's command gives: the output's `FIELD: VALUE` line, or the whole output (field -).
local function recomputed(claim)
  local result = recompute(claim.recompute, records(claim))
  if result.failure then return nil, result.failure end
  if claim.field == "-" then
    local value = normalize(result.text):gsub("^ ", ""):gsub(" $", "")
    if value == "" then return nil, "the recompute command printed nothing" end
    return value
  end
  if claim.field:sub(1, 1) == "~" then -- a Lua pattern over the whole output: its first capture
    local value = result.text:match(claim.field:sub(2))
    if not value then return nil, "the recompute command's output does not match " .. claim.field:sub(2) end
    return normalize(value)
  end
  local value = result.fields[claim.field]
  if not value then return nil, "the recompute command printed no '" .. claim.field .. ":' line" end
  return normalize(value)
end

local docs = {}
local function doc_text(path)
  if docs[path] == nil then
    local text = read(root .. "/" .. path)
    docs[path] = text and {raw = text, flat = normalize(text)} or false
  end
  return docs[path] or nil
end

-- Where the doc states the claim: each place its anchor's text before {} is followed, within 200
-- characters, by its text after {}; what stands between is what the doc says. An anchor that is
-- only {} is found by its value alone.
local function stated(claim, flat)
  local anchor = normalize(claim.anchor)
  local before, after = anchor:match("^(.-){}(.*)$")
  local says = {}
  if before == "" and after == "" then
    local value, from = normalize(claim.value), 1
    while true do
      local s, e = flat:find(value, from, true)
      if not s then break end
      says[#says + 1] = value
      from = e + 1
    end
    return says
  end
  local from = 1
  while true do
    local s, e, next_from
    if before ~= "" then
      s, e = flat:find(before, from, true)
      next_from = e and e + 1
    else
      s, e = flat:find(after, from, true)
      next_from = e and e + 1
      if s then s, e = s - 1, s - 1 end
    end
    if not s then break end
    local value = normalize(claim.value)
    -- the after text that ends the figure: past as many of its repeats as the value holds itself
    -- (a table row's cells), so that a changed row is shown whole
    local tail_start = after ~= "" and flat:find(after, e + 1, true)
    if after ~= "" then
      local inside, at = 0, 1
      while true do
        local found = value:find(after, at, true)
        if not found then break end
        inside, at = inside + 1, found + 1
      end
      for _ = 1, inside do tail_start = tail_start and flat:find(after, tail_start + 1, true) end
    end
    if before ~= "" and flat:sub(e + 1, e + #value) == value and flat:sub(e + #value + 1, e + #value + #after) == after then
      says[#says + 1] = value -- the value itself stands there, whatever it holds
    elseif before == "" and flat:sub(s - #value + 1, s) == value then
      says[#says + 1] = value
    elseif after == "" then
      says[#says + 1] = flat:sub(e + 1, e + 200):match("^(%S*)")
    elseif before == "" then
      says[#says + 1] = flat:sub(math.max(1, s - 200), s):match("(%S*)$")
    elseif tail_start and tail_start - e <= 200 then
      says[#says + 1] = flat:sub(e + 1, tail_start - 1)
    end
    from = next_from
  end
  return says
end

local function lua_pattern(text)
  return (text:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"):gsub("%s+", "%%s+"))
end

-- The doc's text with the claim's value at its anchor replaced by `value` (the one place).
local function rewrite(claim, value)
  local doc = doc_text(claim.doc)
  local before, after = claim.anchor:match("^(.-){}(.*)$")
  -- an empty side has no capture: "()" would capture a position (a number), not text
  local pattern = (before ~= "" and "(" .. lua_pattern(before) .. ")" or "") .. lua_pattern(claim.value) ..
    (after ~= "" and "(" .. lua_pattern(after) .. ")" or "")
  local text, count = doc.raw:gsub(pattern, function(...)
    local captures, i = {...}, 1
    local b = before ~= "" and captures[1] or ""
    if before ~= "" then i = 2 end
    local a = after ~= "" and captures[i] or ""
    return b .. value .. a
  end)
  if count ~= 1 then return nil, "the anchor is in the doc " .. count .. " times with the value " .. claim.value end
  doc.raw, doc.flat = text, normalize(text)
  doc.changed = true
  return true
end

local failures, counts = {}, {kept = 0, pending = 0, ["not-kept"] = 0}
local function fail(claim, message)
  failures[#failures + 1] = string.format("%s (%s, %s): %s", claim.id, claim.doc, claim.where, message)
end

local function check(claim)
  local doc = doc_text(claim.doc)
  if not doc then return fail(claim, "no doc " .. claim.doc) end
  local value = normalize(claim.value)
  local says = stated(claim, doc.flat)
  local with_value = 0
  for _, v in ipairs(says) do if v == value then with_value = with_value + 1 end end
  if claim.status == "not-kept" then
    if with_value > 0 then fail(claim, "the doc states it again (" .. claim.anchor:gsub("{}", function() return claim.value end) .. "), but its record is not kept") end
    counts["not-kept"] = counts["not-kept"] + 1
    return
  end
  local missing = missing_records(claim)
  if claim.status == "remeasure" and #missing > 0 then
    -- pending: bench/remeasure.sh has not run yet; the doc must still say the figure it will replace
    if with_value ~= 1 then
      fail(claim, string.format("the doc says %s at its anchor, the inventory %s (pending re-measurement)",
        #says == 0 and "nothing" or table.concat(says, " | "), claim.value))
    end
    counts.pending = counts.pending + 1
    return
  end
  if #missing > 0 then return fail(claim, "its record is missing: " .. table.concat(missing, ", ")) end
  local got, problem = recomputed(claim)
  if not got then return fail(claim, problem) end
  if mode == "update" and got ~= value then
    local ok, why = rewrite(claim, got)
    if not ok then return fail(claim, why) end
    claim.new_value = got
    value, says, with_value = got, {got}, 1
  end
  if got ~= value then
    return fail(claim, string.format("the record gives %s, the inventory says %s", got, value))
  end
  if with_value ~= 1 or #says ~= 1 then
    if #says == 0 then
      return fail(claim, "the doc no longer has its anchor: " .. claim.anchor)
    elseif with_value == 0 then
      return fail(claim, string.format("the doc says %s, the record gives %s", table.concat(says, " | "), got))
    else
      return fail(claim, "the anchor is not unique in the doc: found " .. #says .. " times")
    end
  end
  counts.kept = counts.kept + 1
end

local claims, problems = inventory()
for _, problem in ipairs(problems) do failures[#failures + 1] = problem end
local chosen = 0
for _, claim in ipairs(claims) do
  if selected(claim) then
    chosen = chosen + 1
    if mode == "list" then
      local missing = claim.status == "remeasure" and #missing_records(claim) > 0
      print(string.format("%s\t%s\t%s\t%s", claim.id, missing and "pending" or claim.status, claim.doc, claim.value))
    else
      check(claim)
    end
  end
end
if #wanted > 0 and chosen == 0 then failures[#failures + 1] = "no claim matches " .. table.concat(wanted, " ") end

if mode == "update" then
  for path, doc in pairs(docs) do
    if doc and doc.changed then write(root .. "/" .. path, doc.raw); print("updated " .. path) end
  end
  -- the inventory's values follow
  local by_file = {}
  for _, claim in ipairs(claims) do
    if claim.new_value then
      local path, line = claim.where:match("^(.*):(%d+)$")
      by_file[path] = by_file[path] or {}
      by_file[path][tonumber(line)] = claim
    end
  end
  for path, lines in pairs(by_file) do
    local out, number = {}, 0
    for line in (read(root .. "/" .. path) .. "\n"):gmatch("([^\n]*)\n") do
      number = number + 1
      local claim = lines[number]
      if claim then
        local fields = {}
        for field in (line .. "\t"):gmatch("([^\t]*)\t") do fields[#fields + 1] = field end
        fields[5] = claim.new_value
        line = table.concat(fields, "\t")
      end
      out[#out + 1] = line
    end
    if out[#out] == "" then out[#out] = nil end
    write(root .. "/" .. path, table.concat(out, "\n") .. "\n")
    print("updated " .. path)
  end
end

if mode ~= "list" then
  for _, failure in ipairs(failures) do print("FAIL " .. failure) end
  print(string.format("%d claims: %d checked against their records, %d pending re-measurement (bench/remeasure.sh), " ..
    "%d not kept; %d failed", chosen, counts.kept, counts.pending, counts["not-kept"], #failures))
end
os.exit(#failures == 0 and 0 or 1)
