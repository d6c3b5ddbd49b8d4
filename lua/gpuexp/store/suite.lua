-- A nightly suite (gpuexp nightly SUITE): a folder of experiments, or a file naming one experiment a
-- line with its arguments (shell-like words, # comments); read here, its one owner.
local M = {}

local function file_exists(path)
  local file = io.open(path, "r")
  if file then file:close() return true end
  return false
end

local function split_words(line)
  local words, i = {}, 1
  while i <= #line do
    local c = line:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c == '"' or c == "'" then
      local close = line:find(c, i + 1, true)
      if not close then return nil, "an unclosed quote" end
      words[#words + 1] = line:sub(i + 1, close - 1)
      i = close + 1
    else
      local stop = line:find("%s", i) or #line + 1
      words[#words + 1] = line:sub(i, stop - 1)
      i = stop
    end
  end
  return words
end

-- " (did you mean 'suite'?)" for a suite that is not there: the files and folders beside it, then the
-- shipped suites (gpuexp nightly nightly), or "".
local function suite_hint(path)
  local folder = path:match("^(.*)/[^/]*$")
  local beside = {}
  for _, name in ipairs(gpuexp._directory_entries(folder or ".") or {}) do
    beside[#beside + 1] = folder and (folder .. "/" .. name) or name
  end
  local hint = gpuexp._did_you_mean(path, beside)
  if hint ~= "" or folder or not gpuexp.data_dir then return hint end
  return gpuexp._did_you_mean(path, gpuexp._directory_entries(gpuexp.data_dir .. "/experiments") or {})
end

-- M.read(path) -> {name, experiments = {{name, path, args}...}}, or nil and why.
function M.read(path)
  local experiments = {}
  if gpuexp._is_directory(path) then
    local code, _, _, listing = gpuexp._process.run({"ls", "-1", "--", path}, {capture = true})
    if code ~= 0 then return nil, "cannot list the suite folder " .. path end
    for name in listing:gmatch("[^\n]+") do
      if name:match("%.lua$") then experiments[#experiments + 1] = {path = path .. "/" .. name, args = {}} end
    end
    if #experiments == 0 then return nil, path .. ": no experiment (*.lua) in this folder" end
  else
    local file, message = io.open(path, "r")
    if not file then return nil, "cannot read the suite " .. path .. ": " .. tostring(message) .. suite_hint(path) end
    local dir = path:match("^(.*)/[^/]*$") or "."
    local number = 0
    for line in file:lines() do
      number = number + 1
      local text = line:gsub("#.*$", "")
      if text:match("%S") then
        local words, why = split_words(text)
        if not words then file:close() return nil, string.format("%s:%d: %s", path, number, why) end
        local script = table.remove(words, 1)
        if script:sub(1, 1) ~= "/" then script = dir .. "/" .. script end
        if not file_exists(script) then
          file:close()
          return nil, string.format("%s:%d: the experiment %s does not exist", path, number, script)
        end
        experiments[#experiments + 1] = {path = script, args = words, line = number}
      end
    end
    file:close()
    if #experiments == 0 then return nil, path .. ": the suite names no experiment" end
  end
  local used = {}
  for _, e in ipairs(experiments) do
    local name = e.path:match("([^/]+)%.lua$") or e.path
    if used[name] then
      used[name] = used[name] + 1
      name = name .. "-" .. used[name]
    else
      used[name] = 1
    end
    e.name = name
  end
  return {name = path:gsub("/+$", ""), experiments = experiments}
end


-- The suite a name means: the path as given, else a shipped suite by name (gpuexp nightly nightly).
function M.locate(name)
  if not file_exists(name) and not gpuexp._is_directory(name) and gpuexp.data_dir and not name:find("/") then
    local shipped = gpuexp.data_dir .. "/experiments/" .. name
    if gpuexp._is_directory(shipped) or file_exists(shipped) then return shipped end
  end
  return name
end

return M
