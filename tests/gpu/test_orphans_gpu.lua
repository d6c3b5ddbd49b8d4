-- No orphans on a GPU (issue 34): a nightly killed with -9 while its worker waits on a kernel that
-- spins for ever leaves nothing running (the run's guard ends the run, the worker ends with its
-- supervisor, the driver ends the kernel with the worker's context), and the next nightly,
-- started at once, takes the GPU's lock over only once the killed night's worker is gone: its
-- measurement runs alone.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, quote = T.workspace(binary), T.quote
local work, write, read = ws.dir, ws.write, ws.read
local function alive(pid) return pid and os.execute("kill -0 " .. pid .. " 2>/dev/null") end

gpuexp.mkdir(work .. "/suite")
write("suite/spin.lua", [[
local dir, tag, before = os.getenv("ORPHAN_DIR"), os.getenv("ORPHAN_TAG"), os.getenv("ORPHAN_BEFORE")
local function put(name, text) local f = assert(io.open(dir .. "/" .. name, "w")); f:write(text); f:close() end
local program = gpuexp.compile{file = "]] .. gpuexp.script_dir .. [[/../fixtures/spin.cu"}
local spin, quick = program:kernel("spin"), program:kernel("quick")
local flag
gpuexp.sweep{name = "spin", axes = {{"n", {1}}},
  setup = function() flag = gpuexp.device():alloc("i32", 2); flag:fill(0) end,
  run = function(p)
    local f = before and io.open(dir .. "/" .. before .. ".worker")
    local other = f and f:read("n")
    if f then f:close() end
    put(tag .. ".beside", (other and os.execute("kill -0 " .. other .. " 2>/dev/null")) and "a leftover\n" or "alone\n")
    local self = io.open("/proc/self/stat")
    put(tag .. ".worker", self:read("n") .. "\n")
    self:close()
    if os.getenv("ORPHAN_SPIN") then
      spin:launch{grid = 1, block = 1, args = {flag}}
      gpuexp.device():synchronize() -- never returns: the kernel spins for ever
    end
    return quick:time{grid = 1, block = 1, args = {flag}}
  end}
]])
local function night_command(tag, spin, before)
  return string.format("ORPHAN_DIR=%s ORPHAN_TAG=%s %s %s GPUEXP_LOCK_DIR=%s %s nightly suite --quiet " ..
    "--history h.sqlite --out night-%s", quote(work), tag, spin and "ORPHAN_SPIN=1" or "",
    before and ("ORPHAN_BEFORE=" .. before) or "", quote(work), binary, tag)
end

-- the first night spins on the GPU; 1 s later it is killed with -9 and the next night starts at once
local started = gpuexp.clock()
os.execute(string.format("cd %s && { %s > one.out 2> one.err & pid=$!; i=0; " ..
  "while [ ! -s one.worker ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; sleep 1; kill -KILL $pid; " ..
  "%s > two.out 2> two.err; echo $? > two.code; }", quote(work), night_command("one", true),
  night_command("two", false, "one")))
local worker = (read("one.worker") or ""):match("%d+")
T.ok(worker, "the first night's worker started: " .. (read("one.err") or ""))
local stderr = read("two.err") or ""
T.eq(read("two.code"), "0\n", "the next night ran: " .. stderr)
T.eq(read("two.beside"), "alone\n", "its measurement ran alone: the killed night's worker was gone")
T.ok(stderr:find("took over the lock " .. work .. "/gpuexp-nightly-", 1, true), "it took the lock over: " .. stderr)
T.ok(not alive(worker), "nothing of the killed night is left")
io.stderr:write(string.format("note: both nights took %.1f s\n", gpuexp.clock() - started))
T.done()
