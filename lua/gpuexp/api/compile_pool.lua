-- gpuexp.tune's compile pool: helper processes on the CPU cores compile the configurations a tune
-- will measure next while the GPU measures the ones before, into the cubin cache that the
-- measuring process then reads (the same gpuexp.compile, the same key: source, options,
-- architecture, toolkit). A tune has a pool when its `compile = function(point)` says what a
-- configuration compiles (gpuexp.compile's table, or a list of them); its `run` then calls
-- gpuexp.compile with the same tables and finds them cached.
--
-- A helper is this binary running the tune's own script offline for the GPU's architecture (its
-- top level up to gpuexp.tune, which then serves): a supervised worker process of the measuring
-- one (its own process group, killed with it), told by its slot (M.SLOT_BASE and up) that it
-- compiles. Protocol over its channel: {op = "compile", id, specs} -> {id, ok, seconds, message};
-- {op = "stop"} ends it. Before a configuration runs, the measuring process waits for its compile
-- only when a helper is still on it; one that no helper has started yet is compiled by run itself
-- (the foreground). A configuration that fails to compile fails in run as before: a row.
local M = {}

M.SLOT_BASE = 100000 -- a worker slot from here up is a compile helper
M.NICE = 10 -- a helper's priority below the measuring process's (its niceness raised by this)
M.DEPTH = 2 -- jobs in a helper's channel at once
M.FIELDS = {source = true, file = true, name = true, arch = true, options = true, defines = true, include = true,
  names = true, compiler = true} -- what a helper can be sent (plain data)

-- The CPU cores this process may run on (Cpus_allowed_list), at least 1.
function M.cores()
  local f = io.open("/proc/self/status", "r")
  local text = f and f:read("a") or ""
  if f then f:close() end
  local list, count = text:match("Cpus_allowed_list:%s*([%d,%-]+)"), 0
  for part in (list or ""):gmatch("[^,]+") do
    local a, b = part:match("^(%d+)%-(%d+)$")
    if a then count = count + tonumber(b) - tonumber(a) + 1 elseif part:match("^%d+$") then count = count + 1 end
  end
  return math.max(1, count)
end

-- Whether this process is a compile helper.
function M.is_helper()
  return gpuexp._worker ~= nil and (gpuexp._worker.slot or 0) >= M.SLOT_BASE
end

-- A helper's loop: compiles what it is sent until told to stop; never returns. (The tune's setup does
-- not run: what a configuration compiles is a function of the configuration alone.)
function M.serve()
  local channel = gpuexp._worker
  gpuexp._process.nice(M.NICE) -- (a failure leaves it as it was)
  while true do
    local message = channel.receive()
    if not message or message.op ~= "compile" then os.exit(0, false) end
    local started, ok, why = gpuexp.clock(), true, nil
    for _, spec in ipairs(message.specs) do
      local compiled, problem = pcall(gpuexp.compile, spec)
      if not compiled then ok, why = false, type(problem) == "table" and problem.message or tostring(problem) end
    end
    if not channel.send({id = message.id, ok = ok, seconds = gpuexp.clock() - started, message = why}) then
      os.exit(0, false)
    end
  end
end

-- The compile tables of a point (plain data only), or nil and why not.
local function specs_of(compile, point)
  local ok, given = pcall(compile, point)
  if not ok then return nil, "compile(point) raised: " .. (type(given) == "table" and given.message or tostring(given)) end
  if type(given) ~= "table" then return nil, "compile(point) returned " .. type(given) .. ", not a table" end
  local list = (given.source or given.file) and {given} or given
  local specs = {}
  for i, spec in ipairs(list) do
    if type(spec) ~= "table" then return nil, "compile(point)'s tables: " .. type(spec) end
    local copy = {}
    for k, v in pairs(spec) do
      if not M.FIELDS[k] then return nil, "compile(point)'s table has '" .. tostring(k) .. "', which a helper cannot take" end
      copy[k] = v
    end
    specs[i] = copy
  end
  return specs
end

local function point_key(point)
  local names = {}
  for k in pairs(point) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for i, k in ipairs(names) do parts[i] = k .. "=" .. tostring(point[k]) end
  return table.concat(parts, "\31")
end

-- M.start(o, say) -> a pool, or nil when the tune has none (no `compile`, compile_workers = 0, an
-- offline plan, no cubin cache to share, no GPU architecture to compile for).
function M.start(o, say)
  if not o.compile or gpuexp.plan or gpuexp.offline_arch then return nil end
  local workers = o.compile_workers or math.max(1, M.cores() - 1)
  if workers == 0 then return nil end
  local no_cache = os.getenv("GPUEXP_NO_CACHE")
  if no_cache and no_cache ~= "" and no_cache ~= "0" then
    say("no compile pool: GPUEXP_NO_CACHE turns off the cubin cache its helpers would fill")
    return nil
  end
  -- the GPU's architecture (with no GPU, the offline plan's default: the helpers compile for it)
  local found, device = pcall(gpuexp.device)
  local arch = found and device and device.facts and device.facts.arch or "sm_90"
  local argv = {gpuexp.executable or "gpuexp", "--quiet", "--arch", arch, "--", gpuexp.script}
  for _, a in ipairs(arg or {}) do argv[#argv + 1] = a end

  local pool = {workers = workers}
  local helpers = {}
  local queue, head = {}, 1          -- jobs not yet sent: {key, specs}
  local jobs = {}                    -- key -> {state = "queued"|"sent"|"done"|"foreground", helper}
  local next_id, stats = 0, {jobs = 0, compile_s = 0, wait_s = 0, missed = 0, failed = 0, workers = workers, latency_s = 0}
  local opened = gpuexp.clock()
  local broken

  local function stop_helper(h)
    if h.process and h.process.pid > 0 then h.process:kill("KILL"); h.process:reap(1) end
    h.process = nil
  end
  local function give_up(why)
    if broken then return end
    broken = why
    say("the compile pool stopped (" .. why .. "); the rest compile in the foreground")
    for _, h in ipairs(helpers) do stop_helper(h) end
  end
  -- keeps M.DEPTH jobs in a helper's channel, so that it starts the next as soon as it ends one
  -- (not when the measuring process, between two configurations, reads its reply)
  local function send_next(h)
    while #h.sent < M.DEPTH and head <= #queue do
      local job = queue[head]
      head = head + 1
      local entry = jobs[job.key]
      if entry.state == "queued" then
        next_id = next_id + 1
        if not h.process:send({op = "compile", id = next_id, specs = job.specs}) then give_up("a helper is gone"); return end
        entry.state, entry.helper = "sent", h
        h.sent[#h.sent + 1] = {id = next_id, key = job.key, sent = gpuexp.clock()}
      end
    end
  end
  -- a helper's reply (or end): its oldest job is done, the next is sent
  local function take_reply(h)
    local reply = h.process:receive()
    local busy = h.sent[1]
    if not reply or not busy or reply.id ~= busy.id then
      give_up(reply and "a helper answered out of turn (does the script run a sweep before its tune?)" or
        "a helper ended (its script raised before gpuexp.tune?)")
      return
    end
    table.remove(h.sent, 1)
    local entry = jobs[busy.key]
    entry.state = "done"
    stats.jobs = stats.jobs + 1
    stats.compile_s = stats.compile_s + (reply.seconds or 0)
    -- the job's time outside the compiler (from when it was sent, or the helper's previous reply
    -- was read): the helper's start (its first job), the channel, a reply left unread
    local now = gpuexp.clock()
    stats.latency_s = stats.latency_s + math.max(0, now - math.max(busy.sent, h.read or 0) - (reply.seconds or 0))
    h.read = now
    stats.first_s = stats.first_s or now - opened
    if not reply.ok then stats.failed = stats.failed + 1 end
    send_next(h)
  end
  -- waits (at most timeout_s; 0: a look) for replies; true when something arrived
  local function pump(timeout_s)
    if broken then return false end
    local processes, owners = {}, {}
    for _, h in ipairs(helpers) do
      if h.process and #h.sent > 0 then processes[#processes + 1] = h.process; owners[#owners + 1] = h end
    end
    if #processes == 0 then return false end
    local ready = gpuexp._process.wait(processes, timeout_s)
    if type(ready) ~= "number" then return false end
    take_reply(owners[ready])
    return true
  end

  for i = 1, workers do
    local ok, process = pcall(gpuexp._process.spawn, argv, 0, M.SLOT_BASE + i, true)
    if not ok then give_up("a helper could not start: " .. tostring(type(process) == "table" and process.message or process)) break end
    helpers[i] = {process = process, sent = {}}
  end

  -- Queues the configurations' compiles (each once), in order, and starts idle helpers on them.
  function pool.submit(points)
    if broken then return end
    for _, point in ipairs(points) do
      local key = point_key(point)
      if not jobs[key] then
        local specs, why = specs_of(o.compile, point)
        if specs then
          jobs[key] = {state = "queued"}
          queue[#queue + 1] = {key = key, specs = specs}
        else
          jobs[key] = {state = "foreground"}
          if not pool.said then pool.said = true; say("a configuration is compiled in the foreground: " .. why) end
        end
      end
    end
    for _, h in ipairs(helpers) do if h.process then send_next(h) end end
    while pump(0) do end
  end

  -- Before a configuration runs: its compile done, or waited for when a helper is on it.
  function pool.wait_for(point)
    while pump(0) do end
    local entry = jobs[point_key(point)]
    if not entry or entry.state == "done" then return end
    if entry.state == "queued" then -- no helper reached it: run compiles it (as without a pool)
      entry.state = "foreground"
      stats.missed = stats.missed + 1
      return
    end
    if entry.state ~= "sent" then return end
    local started = gpuexp.clock()
    while entry.state == "sent" and not broken do
      if not pump(5) and gpuexp._process.stop_signal() ~= 0 then break end
    end
    stats.wait_s = stats.wait_s + gpuexp.clock() - started
  end

  -- Ends the helpers; returns what the pool did: {workers, jobs, compile_s, wait_s, missed, failed,
  -- latency_s (the jobs' time outside the compiler), first_s (from the start to the first compile
  -- done), life_s (the pool's life), busy (compile_s over workers x life_s)}.
  function pool.close()
    for _, h in ipairs(helpers) do
      if h.process then
        if #h.sent == 0 then h.process:send({op = "stop"}) end
        h.process:kill("KILL")
        h.process:reap(1)
        h.process = nil
      end
    end
    stats.broken = broken
    stats.life_s = gpuexp.clock() - opened
    stats.busy = stats.life_s > 0 and stats.compile_s / (workers * stats.life_s) or 0
    return stats
  end
  return pool
end

return M
