-- Docs that run: every fenced code block of README.md and docs/**/*.md, run by its tag, and every
-- relative link checked. Run by the gpuexp binary: run_docs.lua BINARY offline|gpu [FILE.md...]
-- (the files default to README.md and every docs/**/*.md).
--
-- Tags (the first word is the language, the rest are flags; docs/README.md says the same to writers):
--   sh            bash -e, in a fresh temporary folder, offline (GX_LIBCUDA names no driver, so even
--                 on a GPU machine nothing runs on the GPU): gpuexp on PATH, $GPUEXP_SRC = the
--                 repository root, HOME inside the folder (nothing is written outside it)
--   lua           a complete script, run as `gpuexp --arch sm_90 FILE.lua` in such a folder
--   sh gpu, lua gpu   the same, only with a GPU (the `gpu` mode; lua runs without --arch)
--   lua both      a script with a plan branch and a GPU branch: run as `lua` offline, and in the
--                 `gpu` mode run on the GPU too (its output is compared in the offline run only)
--   sh install    the set-up command that builds gpuexp and puts it on PATH (the README's first):
--                 run offline in a copy of the repository (no .git, no build folder), with apt-get a
--                 no-op (the packages are there: this test's own build needed them), HOME inside the
--                 folder and DESTDIR set to a folder whose usr/local/bin is on PATH, where no other
--                 gpuexp is: `cmake --install build` puts gpuexp there and the block runs it by name.
--                 It must leave an executable gpuexp there.
--   sh setup      the other set-up commands (packages, the tests, a .deb): skipped, said in a line
--   lua excerpt   a piece of a script (not complete): compiled by Lua to check its syntax, not run
--   text          output: when it follows a run block with nothing but blank lines between, it is
--                 compared with what the block printed on stdout, exactly (trailing spaces aside; a
--                 line `...` stands for any number of lines); otherwise shown
--   text measured the output of a block run on a GPU (sh gpu, lua gpu), whose numbers a GPU changes
--                 (timings, clocks): numbers may differ and runs of whitespace are one; after any
--                 other block the tag fails (an offline output is compared exactly)
--   json          parsed as JSON
--   cuda file=PATH  a kernel source (or header) for the page's later blocks, which compile it
--   file=PATH     (a flag of lua, lua gpu, sh, and cuda's one) the block is also written as PATH
--                 (folders made) into the folder of every later block of the same page, so a page
--                 can run a script and compile a kernel it showed
--   needs=PROGRAM (a flag of a run block) the block runs only where PROGRAM is on PATH (gnuplot:
--                 the lent GPU machines have none); elsewhere it is skipped, said in a line
-- Any other tag, an empty one included, fails: nothing escapes silently. So does a heading with
-- nothing under it.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local cjson = require("cjson")

local binary, mode = arg[1], arg[2] or "offline"
assert(binary and (mode == "offline" or mode == "gpu"), "usage: run_docs.lua BINARY offline|gpu [FILE.md...]")
local root = gpuexp.script_dir:gsub("/tests/docs$", "")
if not root:match("^/") then root = os.getenv("PWD") .. "/" .. root end
if not binary:match("^/") then binary = os.getenv("PWD") .. "/" .. binary end
local binary_dir = binary:match("^(.*)/[^/]*$")

local function shell_quote(text) return "'" .. text:gsub("'", "'\\''") .. "'" end
local read = require("gpuexp.store.meta").read_all
local write = T.write
local function exists(path)
  local file = io.open(path, "rb")
  if file then file:close() return true end
  return os.execute("test -d " .. shell_quote(path)) == true
end

if mode == "gpu" then T.require_gpu() end

-- the pages
local pages = {}
for i = 3, #arg do pages[#pages + 1] = arg[i] end
if #pages == 0 then
  pages[1] = "README.md"
  local finder = io.popen("cd " .. shell_quote(root) .. " && find docs -name '*.md' | LC_ALL=C sort")
  for line in finder:lines() do pages[#pages + 1] = line end
  finder:close()
end

-- A page's fenced blocks: {line, language, flags = {set}, file, body}, and for each the number of
-- the block it follows directly (only blank lines between), or nil.
local function blocks_of(text)
  local blocks, current, blank_since_close = {}, nil, nil
  local number = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    number = number + 1
    if current then
      if line:match("^```%s*$") then
        blocks[#blocks + 1] = current
        current, blank_since_close = nil, #blocks
      else
        current.body[#current.body + 1] = line
      end
    else
      local info = line:match("^```(.*)$")
      if info then
        local words = {}
        for word in info:gmatch("%S+") do words[#words + 1] = word end
        current = {line = number, language = words[1] or "", flags = {}, body = {}, info = info,
                   follows = blank_since_close}
        for i = 2, #words do
          local name, program = words[i]:match("^file=(.+)$"), words[i]:match("^needs=(.+)$")
          if name then current.file = name elseif program then current.needs = program
          else current.flags[words[i]] = true end
        end
      elseif not line:match("^%s*$") then
        blank_since_close = nil
      end
    end
  end
  if current then current.unclosed = true blocks[#blocks + 1] = current end
  return blocks
end

-- What the text block expects against what was printed: the same text, trailing space dropped;
-- "..." matches any lines (none included). Measured output (`text measured`, a GPU's): numbers
-- stand for any number and runs of whitespace are one space.
local function normal(line, measured)
  line = line:gsub("%s+$", "")
  if not measured then return line end
  return (line:gsub("[-+]?%d[%d.,]*e?[-+]?%d*", "#"):gsub("%s+", " "):gsub("^ ", ""))
end
local function lines_of(text, measured)
  local lines = {}
  for line in (text:gsub("\n$", "") .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = normal(line, measured) end
  if #lines == 1 and lines[1] == "" then lines = {} end
  return lines
end
local function matches(expected, actual, e, a)
  e, a = e or 1, a or 1
  if e > #expected then return a > #actual end
  if expected[e] == "..." then
    for skip = a, #actual + 1 do
      if matches(expected, actual, e + 1, skip) then return true end
    end
    return false
  end
  return a <= #actual and expected[e] == actual[a] and matches(expected, actual, e + 1, a + 1)
end

-- GitHub's anchor of a heading
local function slug(heading)
  return (heading:lower():gsub("`", ""):gsub("[^%w%- _]", ""):gsub(" ", "-"))
end
local function anchors_of(text)
  local anchors, fenced = {}, false
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^```") then fenced = not fenced end
    local heading = not fenced and line:match("^#+%s+(.-)%s*$")
    if heading then anchors[slug(heading)] = true end
  end
  return anchors
end

local failures, counts = {}, {run = 0, compared = 0, excerpt = 0, setup = 0, skipped_gpu = 0, links = 0, sources = 0, missing = 0}
local function fail(where, what) failures[#failures + 1] = where .. ": " .. what end

-- A block's time limit (a hang, not a slow block, is what it catches): an offline block runs in
-- seconds; on a GPU a point measures until its noise is under 0.5% or 15 s have passed
-- (measurement-policy.md), and the tutorial's two nights of five points each took 76 s and more on
-- an H100, where SAXPY's samples never settle under 0.5%.
-- An install block builds gpuexp from scratch: minutes on a busy machine of two cores.
local function block_limit_s(run_mode, block)
  if block.flags.install then return 1200 end
  return run_mode == "gpu" and 600 or 180
end

-- An install block's folder: a copy of the repository without its .git and build folders (this
-- test's own build among them), a no-op apt-get first on PATH, and DESTDIR, whose usr/local/bin is
-- on PATH in place of the folder of the binary under test. Returns the folder the block runs in,
-- the PATH entries before the system's, and the environment's additions.
local function install_folder(dir)
  local copy, stubs, destination = dir .. "/repository", dir .. "/.stubs", dir .. "/.installed"
  gpuexp.mkdir(copy)
  gpuexp.mkdir(stubs)
  local excluded = {"--exclude=./.git", "--exclude=./build", "--exclude=./build-*"}
  if binary_dir:sub(1, #root + 1) == root .. "/" then
    excluded[#excluded + 1] = "--exclude=" .. shell_quote("./" .. binary_dir:sub(#root + 2))
  end
  assert(os.execute(string.format("tar -C %s %s -cf - . | tar -C %s -xf -", shell_quote(root),
    table.concat(excluded, " "), shell_quote(copy))), "the repository could not be copied for an install block")
  write(stubs .. "/apt-get", "#!/bin/sh\n# the docs test: the packages are installed already\nexit 0\n")
  assert(os.execute("chmod +x " .. shell_quote(stubs .. "/apt-get")))
  return copy, stubs .. ":" .. destination .. "/usr/local/bin", "DESTDIR=" .. shell_quote(destination) .. " ",
    destination .. "/usr/local/bin/gpuexp"
end

local function run_block(page, block, files)
  local dir = T.temporary_directory()
  for name, body in pairs(files) do
    local folder = name:match("^(.*)/[^/]*$")
    if folder then gpuexp.mkdir(dir .. "/" .. folder) end
    write(dir .. "/" .. name, body)
  end
  local body = table.concat(block.body, "\n") .. "\n"
  local command
  if block.language == "sh" then
    write(dir .. "/.block.sh", body)
    command = "bash -e .block.sh"
  else
    local name = block.file or ".block.lua"
    write(dir .. "/" .. name, body)
    command = "gpuexp " .. ((block.flags.gpu or mode == "gpu") and "" or "--arch sm_90 ") .. shell_quote(name)
  end
  gpuexp.mkdir(dir .. "/.home")
  local folder, path, extra, installed = dir, binary_dir, "", nil
  if block.flags.install then
    folder, path, extra, installed = install_folder(dir)
    os.rename(dir .. "/.block.sh", folder .. "/.block.sh")
  end
  -- an offline block is offline on a GPU machine too: the driver is not found there
  local offline = mode == "gpu" and "" or "GX_LIBCUDA=" .. shell_quote(dir .. "/.no-driver/libcuda.so.1")
  local _, _, code = os.execute(string.format(
    "cd %s && env PATH=%s:\"$PATH\" GPUEXP_SRC=%s HOME=%s/.home XDG_DATA_HOME= XDG_CACHE_HOME= XDG_CONFIG_HOME= " ..
    "GPUEXP_HISTORY= %s%s timeout %d %s > %s/.stdout 2> %s/.stderr < /dev/null",
    shell_quote(folder), shell_quote(path), shell_quote(root), shell_quote(dir), extra, offline,
    block_limit_s(mode, block), command, shell_quote(dir), shell_quote(dir)))
  counts.run = counts.run + 1
  local stdout, stderr = read(dir .. "/.stdout") or "", read(dir .. "/.stderr") or ""
  if code == 0 and installed and not os.execute("test -x " .. shell_quote(installed)) then
    code, stderr = 1, stderr .. "(docs test) the set-up put no gpuexp on PATH: cmake --install did not run, or " ..
      "installed somewhere else than /usr/local\n"
  end
  return code, stdout, stderr
end

for _, page in ipairs(pages) do
  local text = read(root .. "/" .. page)
  if not text then
    fail(page, "cannot be read")
  else
    local files, outputs = {}, {}
    local page_blocks = blocks_of(text)
    for index, block in ipairs(page_blocks) do
      local where = page .. ":" .. block.line
      local language, flags = block.language, block.flags
      local known = {sh = {gpu = true, setup = true, install = true}, lua = {gpu = true, excerpt = true, both = true},
                     text = {measured = true}, json = {}, cuda = {}}
      local allowed = known[language]
      local unknown
      for flag in pairs(flags) do
        if not (allowed and allowed[flag]) then unknown = flag end
      end
      if block.unclosed then
        fail(where, "the block is never closed")
      elseif not allowed or unknown or (block.file and (language == "text" or language == "json")) or
        (language == "cuda" and not block.file) then
        fail(where, "unknown block tag '```" .. block.info .. "' (sh, sh gpu, sh setup, sh install, lua, lua gpu, " ..
          "lua both, lua excerpt, text, text measured, json, cuda file=PATH; file=PATH on a run block)")
      elseif language == "cuda" then
        counts.sources = counts.sources + 1
      elseif language == "text" and flags.measured and not (block.follows and page_blocks[block.follows].flags.gpu and
        (page_blocks[block.follows].language == "sh" or page_blocks[block.follows].language == "lua")) then
        fail(where, "```text measured is for the output of a block run on a GPU (sh gpu, lua gpu), right above it; " ..
          "any other output is compared exactly")
      elseif language == "text" then
        local output = block.follows and outputs[block.follows]
        if output then
          local expected, actual = lines_of(table.concat(block.body, "\n"), flags.measured), lines_of(output, flags.measured)
          if matches(expected, actual) then
            counts.compared = counts.compared + 1
          else
            fail(where, "the output shown is not what the block above printed:\n--- shown\n" ..
              table.concat(block.body, "\n") .. "\n--- printed\n" .. output)
          end
        end
      elseif language == "json" then
        local ok, err = pcall(cjson.decode, table.concat(block.body, "\n"))
        if not ok then fail(where, "not JSON: " .. tostring(err)) end
      elseif flags.excerpt then
        local _, err = load(table.concat(block.body, "\n"), "=" .. where)
        if err then fail(where, "does not compile: " .. err) end
        counts.excerpt = counts.excerpt + 1
      elseif flags.setup then
        print("skipped " .. where .. " (sh setup: the set-up commands install packages and build)")
        counts.setup = counts.setup + 1
      elseif not flags.both and (flags.gpu and true or false) ~= (mode == "gpu") then
        if flags.gpu then counts.skipped_gpu = counts.skipped_gpu + 1 end
      elseif block.needs and not os.execute("command -v " .. shell_quote(block.needs) .. " >/dev/null 2>&1") then
        print("skipped " .. where .. " (needs " .. block.needs .. ", which is not on PATH here)")
        counts.missing = counts.missing + 1
      else
        local code, stdout, stderr = run_block(page, block, files)
        if code ~= 0 then
          fail(where, string.format("```%s exited with %s\n--- block\n%s\n--- stdout\n%s--- stderr\n%s", block.info,
            tostring(code), table.concat(block.body, "\n"), stdout:sub(-3000), stderr:sub(-3000)))
        else
          print("ok " .. where .. " " .. block.info)
        end
        if mode == "offline" or not flags.both then outputs[index] = stdout end
      end
      if block.file and (language == "lua" or language == "sh" or language == "cuda") then
        files[block.file] = table.concat(block.body, "\n") .. "\n"
      end
    end

    -- a heading with nothing under it (before the next heading of its level or above, or the end)
    local fenced, open_heading = false, nil
    local number = 0
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
      number = number + 1
      if line:match("^```") then fenced = not fenced end
      local hashes, title = line:match("^(#+)%s+(.-)%s*$")
      if not fenced and hashes then
        if open_heading and #hashes <= open_heading.level then
          fail(page .. ":" .. open_heading.line, "the heading '" .. open_heading.title .. "' has nothing under it")
        end
        open_heading = {level = #hashes, title = title, line = number}
      elseif line:match("%S") then
        open_heading = nil
      end
    end
    if open_heading then
      fail(page .. ":" .. open_heading.line, "the heading '" .. open_heading.title .. "' has nothing under it")
    end

    -- relative links, and anchors in them
    local anchors_cache = {}
    local prose = text:gsub("\n```.-\n```", "\n")
    for target in prose:gmatch("%]%(([^)%s]+)%)") do
      if not target:match("^%a[%w+.-]*:") then
        counts.links = counts.links + 1
        local path, anchor = target:match("^([^#]*)#?(.*)$")
        local directory = page:match("^(.*)/[^/]*$") or "."
        local full = path == "" and root .. "/" .. page or root .. "/" .. directory .. "/" .. path
        if not exists(full) then
          fail(page, "link to " .. target .. ": no such file")
        elseif anchor ~= "" then
          anchors_cache[full] = anchors_cache[full] or anchors_of(read(full) or "")
          if not anchors_cache[full][anchor] then fail(page, "link to " .. target .. ": no such heading") end
        end
      end
    end
  end
end

print(string.format("%d pages: %d blocks run, %d outputs compared, %d kernel sources written, %d excerpts compiled, " ..
  "%d set-up blocks skipped, %d GPU blocks left for the gpu label, %d skipped for a missing program, %d links checked",
  #pages, counts.run, counts.compared, counts.sources, counts.excerpt, counts.setup, counts.skipped_gpu, counts.missing,
  counts.links))
if #failures > 0 then
  io.stderr:write(table.concat(failures, "\n\n") .. "\n")
  io.stderr:write(#failures .. " failure(s)\n")
  os.exit(1, true) -- closing the state removes the temporary folders
end
if mode == "gpu" and counts.run == 0 then
  print("no GPU blocks")
end
T.done("docs " .. mode)
