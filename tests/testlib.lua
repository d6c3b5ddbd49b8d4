-- Assertions for tests run by the gpuexp binary. A failed assertion raises with the test's line.
local T = {}

function T.require_gpu()
  local ok, count = pcall(gpuexp.device_count)
  if not ok or count == 0 then
    io.stderr:write("SKIP: no GPU (" .. tostring(count) .. ")\n")
    os.exit(77)
  end
  return gpuexp.device()
end

function T.eq(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s: expected %s, got %s", what or "value", tostring(expected), tostring(actual)), 2)
  end
end

function T.near(actual, expected, tolerance, what)
  if type(actual) ~= "number" or math.abs(actual - expected) > tolerance then
    error(string.format("%s: expected %s +- %s, got %s", what or "value", tostring(expected), tostring(tolerance),
      tostring(actual)), 2)
  end
end

function T.ok(condition, what)
  if not condition then error("expected true: " .. (what or "condition"), 2) end
end

-- Calls fn, expects an error whose text contains `needle` (plain text); returns the error value.
-- Whether a line matches what is expected: a Lua pattern, or a list of patterns any of which may match.
function T.matches(line, expect)
  if not line then return false end
  if type(expect) == "string" then return line:find(expect) ~= nil end
  for _, pattern in ipairs(expect) do if line:find(pattern) then return true end end
  return false
end

function T.raises(fn, needle, what)
  local ok, err = pcall(fn)
  if ok then error((what or "call") .. ": expected an error containing '" .. needle .. "', got none", 2) end
  local text = type(err) == "table" and err.message or tostring(err)
  if not text:find(needle, 1, true) then
    error(string.format("%s: expected an error containing '%s', got '%s'", what or "call", needle, text), 2)
  end
  return err
end

-- A whole file's text, or nil when it cannot be opened (the store's reader); a file written whole
-- (returns its path).
T.read = require("gpuexp.store.meta").read_all
function T.write(path, text)
  local file = assert(io.open(path, "wb"))
  assert(file:write(text))
  assert(file:close())
  return path
end

-- text quoted for sh: one word, whatever it holds.
function T.quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

-- The text of a file of tests/fixtures.
function T.fixture(name)
  return assert(T.read(gpuexp.script_dir .. "/../fixtures/" .. name), "no fixture " .. name)
end

-- A fresh folder under the system's temporary folder, removed with everything in it when the
-- test ends, passed or failed (a finalizer: the Lua state is closed on every exit path).
local temporaries = {}
setmetatable(temporaries, {__gc = function(list)
  for _, dir in ipairs(list) do os.execute("rm -rf '" .. dir:gsub("'", "'\\''") .. "'") end
end})
function T.temporary_directory()
  local dir = os.tmpname()
  os.remove(dir)
  gpuexp.mkdir(dir)
  temporaries[#temporaries + 1] = dir
  return dir
end
T.temporaries = temporaries -- kept alive until the state closes

-- A temporary working folder for a test that drives the gpuexp binary as a user does:
-- ws.dir, ws.write(name, text) -> path, ws.read(name) -> text or nil, and
-- ws.run(arguments, environment) -> exit code, stdout, stderr of `environment binary arguments`
-- run inside the folder.
function T.workspace(binary)
  local dir = T.temporary_directory()
  local ws = {dir = dir}
  function ws.write(name, text)
    local file = assert(io.open(dir .. "/" .. name, "w"))
    file:write(text)
    file:close()
    return dir .. "/" .. name
  end
  function ws.read(name)
    local file = io.open(dir .. "/" .. name, "rb")
    if not file then return nil end
    local text = file:read("a")
    file:close()
    return text
  end
  -- The DOM of a page of the folder as headless Chromium builds it (the network off, the browser's
  -- profile and caches inside the folder), or nil with a note when no Chromium is installed.
  function ws.browser_dom(page)
    local finder = io.popen("command -v chromium chromium-browser 2>/dev/null")
    local chromium = finder:read("l")
    finder:close()
    if not chromium then
      io.stderr:write("note: no chromium here; " .. page .. " was checked as text only\n")
      return nil
    end
    local home = dir .. "/browser"
    local browser = io.popen(string.format("HOME=%s XDG_CONFIG_HOME=%s XDG_CACHE_HOME=%s %s --headless --no-sandbox " ..
      "--disable-gpu --user-data-dir=%s/profile --proxy-server=127.0.0.1:9 --dump-dom file://%s/%s 2>/dev/null", home,
      home, home, chromium, home, dir, page))
    local dom = browser:read("a")
    browser:close()
    return dom
  end
  function ws.run(arguments, environment)
    local _, _, code = os.execute(string.format("cd %s && %s %s %s > stdout 2> stderr", dir, environment or "", binary,
      arguments))
    return code, ws.read("stdout") or "", ws.read("stderr") or ""
  end
  return ws
end

-- The ids of the processes working in dir (their current folder) whose command line holds text,
-- after waiting up to seconds (default 0) for them to go. Unlike pgrep -f, blind to the same test
-- running at the same time in another checkout or build folder.
-- A workspace holding a nightly suite of the fake experiment (tests/fixtures/fake_night.lua, whose
-- times and counters the FAKE_* variables set), and night(history, n, environment, extra): `gpuexp
-- nightly` of it as night n, offline (--arch sm_90), recorded in history, written to night<n>
-- -> exit code, stdout, stderr.
function T.fake_nights(binary)
  local ws = T.workspace(binary)
  gpuexp.mkdir(ws.dir .. "/suite")
  ws.write("suite/fake.lua", T.fixture("fake_night.lua"))
  local function night(history, n, environment, extra)
    return ws.run(string.format("nightly suite --arch sm_90 --history %s --out night%d %s", history, n, extra or ""),
      string.format("GPUEXP_LOCK_DIR=%s FAKE_NIGHT=%d %s", ws.dir, n, environment or ""))
  end
  return ws, night
end

function T.processes_in(dir, text, seconds)
  local real = gpuexp._realpath(dir) or dir
  local deadline = gpuexp.clock() + (seconds or 0)
  while true do
    local found = {}
    local listing = io.popen("ls /proc")
    for pid in listing:lines() do
      if pid:match("^%d+$") and gpuexp._realpath("/proc/" .. pid .. "/cwd") == real then
        local file = io.open("/proc/" .. pid .. "/cmdline", "rb")
        local command = file and file:read("a") or ""
        if file then file:close() end
        if command:gsub("%z", " "):find(text, 1, true) then found[#found + 1] = pid .. ": " .. command:gsub("%z", " ") end
      end
    end
    listing:close()
    if #found == 0 or gpuexp.clock() >= deadline then return found end
    os.execute("sleep 0.1")
  end
end

function T.done(name)
  print("ok " .. (name or gpuexp.script))
end

return T
