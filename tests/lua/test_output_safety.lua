-- Output safety in depth (issue 34, BAD 1, 2 and 4), as root on a CI runner meets it in a shared
-- folder where another user (nobody) planted links and FIFOs: each sentence of the "Outputs"
-- section of docs/explanation/threat-model.md checked. Links of another user are made as root and
-- given to nobody with chown -h, as nobody could make them; without root that cannot be done, so
-- the test skips (77).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
if io.popen("id -u"):read("l") ~= "0" then
  io.stderr:write("SKIP: the links of another user are made with chown -h, which needs root\n")
  os.exit(77)
end
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run

local function sh(command) return os.execute(string.format("cd %s && %s", work, command)) end
local function kind_of(path) -- "regular", "fifo", "link", "directory", or nil
  local pipe = io.popen("stat -c %F " .. path .. " 2>/dev/null")
  local text = pipe:read("a")
  pipe:close()
  return text:match("^symbolic link") and "link" or text:match("^regular") and "regular" or
    text:match("^fifo") and "fifo" or text:match("^directory") and "directory" or nil
end
local function listing(dir) -- the names in a folder, sorted, one string
  local pipe = io.popen("ls -A " .. dir)
  local text = pipe:read("a")
  pipe:close()
  return text
end
-- nobody's link: name -> target, in the shared folder s/
local function plant(name, target) T.ok(sh(string.format("ln -sfn %s s/%s && chown -h nobody s/%s", target, name, name)), name) end
local function refused(code, stderr, what, link)
  T.eq(code, 7, what .. ": " .. stderr)
  T.ok(stderr:find((link or "") .. (link and " is" or "it is") .. " a symbolic link that belongs to another user (uid ", 1, true),
    what .. " names the link: " .. stderr)
end

write("base.csv", "p,median_ms\na,1.0\n")
write("new.csv", "p,median_ms\na,1.0\n")
write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) return {median_ms = p.x} end}')
T.eq(run("--arch sm_90 --quiet -o r.csv k.lua"), 0, "a run to record")
T.eq(run("history --history h.sqlite record r.csv"), 0, "recorded")
sh("mkdir -m 1777 s && mkdir -m 700 private && echo precious > private/secret && chmod 600 private/secret")
sh("echo mine > private/index.html")
local private = listing(work .. "/private")
local compare = "compare --axes p base.csv new.csv -o "

-- ---- "the owner check comes before any write in place": another user's link is refused whatever
-- it leads to: a file under /proc, a device, a FIFO ----
plant("proc.txt", "/proc/self/root" .. work .. "/private/secret")
local code, _, stderr = run(compare .. "s/proc.txt")
refused(code, stderr, "compare -o nobody's link into /proc")
code, _, stderr = run("history --history h.sqlite export 1 -o s/proc.txt")
refused(code, stderr, "history export -o nobody's link into /proc")
T.eq(read("private/secret"), "precious\n", "the file behind /proc is untouched")
T.ok(sh("mknod null c 1 3"), "a device node of the test's own")
plant("device.txt", work .. "/null")
code, _, stderr = run(compare .. "s/device.txt")
refused(code, stderr, "compare -o nobody's link to a device")
plant("device.csv", work .. "/null")
code, _, stderr = run("merge s/device.csv r.csv")
refused(code, stderr, "merge into nobody's link to a device")
sh("mkfifo fifo && chmod 666 fifo")
plant("fifo.txt", work .. "/fifo")
local started = gpuexp.clock()
code, _, stderr = run(compare .. "s/fifo.txt")
refused(code, stderr, "compare -o nobody's link to a FIFO")
T.ok(gpuexp.clock() - started < 2, "refused at once, no reader waited for")
-- the same links of the test's own (root's) are followed: /dev/stdout's way, a device, a FIFO
sh("ln -s null mine.txt")
T.eq(run(compare .. "mine.txt"), 0, "root's link to a device: written in place")
T.eq(io.popen("stat -c %F " .. work .. "/null"):read("l"), "character special file", "the device is still one")
local stdout
code, stdout = run(compare .. "/dev/stdout")
T.ok(code == 0 and stdout:find("1 same", 1, true), "-o /dev/stdout (root's links, then one of /proc): " .. stdout)

-- ---- "no link of another user on the way is followed, a folder's included" ----
plant("sub", work .. "/private")
code, _, stderr = run(compare .. "s/sub/r.txt")
refused(code, stderr, "compare -o through nobody's folder link", "s/sub")
code, _, stderr = run("history --history h.sqlite export 1 -o s/sub/e.csv")
refused(code, stderr, "history export -o through nobody's folder link", "s/sub")
code, _, stderr = run("merge s/sub/m.csv r.csv")
refused(code, stderr, "merge through nobody's folder link", "s/sub")
code, _, stderr = run("--arch sm_90 --quiet -o s/sub/k.csv k.lua")
refused(code, stderr, "a sweep's -o through nobody's folder link", "s/sub")
plant("site", work .. "/private")
code, _, stderr = run("history --history h.sqlite site s/site")
refused(code, stderr, "history site nobody's link to a folder")
code, _, stderr = run("history --history h.sqlite site s/sub/site")
refused(code, stderr, "history site under nobody's folder link", "s/sub")
code, _, stderr = run("history --history s/sub/h.sqlite record r.csv")
T.eq(code, 6, "a history through nobody's folder link: the history's exit code: " .. stderr)
T.ok(stderr:find("cannot make the folder s/sub: it is a symbolic link that belongs to another user", 1, true), stderr)
code, _, stderr = run("history --history s/sub/new/h.sqlite record r.csv")
T.ok(code == 6 and stderr:find("s/sub is a symbolic link that belongs to another user", 1, true),
  "nor is a folder made beyond it: " .. stderr)
gpuexp.mkdir(work .. "/suite")
write("suite/k.lua", read("k.lua"))
local night = "nightly suite --arch sm_90 --quiet --no-confirm --history n.sqlite --out "
code, _, stderr = run(night .. "s/site", "GPUEXP_LOCK_DIR=" .. work)
T.ok(code == 2 and stderr:find("cannot make the folder s/site: it is a symbolic link that belongs to another user", 1,
  true), "nightly --out nobody's link to a folder (exit 2, as for a file in its way): " .. stderr)
code, _, stderr = run(night .. "s/sub/night", "GPUEXP_LOCK_DIR=" .. work)
T.ok(code == 2 and stderr:find("s/sub is a symbolic link that belongs to another user", 1, true),
  "nightly --out under nobody's folder link: " .. stderr)
-- a link of root's whose text goes through nobody's link: refused all the same
sh("ln -s s/sub/r.txt chain.txt")
code, _, stderr = run(compare .. "chain.txt")
T.ok(code == 7 and stderr:find("s/sub is a symbolic link that belongs to another user", 1, true),
  "root's link through nobody's: " .. stderr)
T.eq(listing(work .. "/private"), private, "nothing was made or replaced in the private folder")
T.eq(read("private/index.html"), "mine\n", "its index.html untouched")
T.eq(read("private/secret"), "precious\n", "its secret untouched")
T.eq(kind_of(work .. "/gpuexp-nightly"), nil, "no night folder made elsewhere")
-- root's own links to folders are followed; ".." and "." as the kernel reads them
sh("mkdir mine && ln -s mine mylink && ln -s ../mine mine/up")
T.eq(run(compare .. "mylink/r.txt"), 0, "root's link to a folder: followed")
T.ok(read("mine/r.txt"):find("1 same", 1, true), "the report in the folder it leads to")
T.eq(run(compare .. "mylink/up/./../mine/r2.txt"), 0, "a relative link, . and ..")
T.ok(read("mine/r2.txt"), "written where the kernel would")
T.eq(kind_of(work .. "/mylink"), "link", "the link kept")
code, _, stderr = run(compare .. "base.csv/r.txt")
T.ok(code == 7 and stderr:find("cannot write base.csv/r.txt: base.csv is not a folder", 1, true), stderr)

-- ---- "a FIFO is written only when it is the output named, and never waited on for ever" ----
-- at a sweep's metadata (a name gpuexp makes up): refused before anything is touched, no lock held
local kept = read("r.csv")
sh("rm r.meta.json && mkfifo r.meta.json")
started = gpuexp.clock()
code, _, stderr = run("--arch sm_90 --quiet -o r.csv k.lua")
T.eq(code, 7, "a FIFO at X.meta.json: " .. stderr)
T.ok(stderr:find("cannot write r.meta.json: it is a FIFO; gpuexp writes a device or a FIFO only where it is the " ..
  "output named", 1, true), stderr)
T.ok(gpuexp.clock() - started < 2, "refused at once")
T.eq(read("r.csv"), kept, "the CSV untouched")
T.eq(kind_of(work .. "/r.csv.lock"), nil, "no lock left")
sh("rm r.meta.json && mkfifo r.samples.csv")
code, _, stderr = run("--arch sm_90 --quiet -o r.csv k.lua")
T.ok(code == 7 and stderr:find("cannot write r.samples.csv: it is a FIFO", 1, true), "a FIFO at X.samples.csv: " .. stderr)
sh("rm r.samples.csv")
T.eq(run("--arch sm_90 --quiet -o r.csv k.lua"), 0, "the output free again")
-- at a sweep's OUT, nothing reading it: refused after a bounded wait, the lock released
sh("mkfifo out.csv")
started = gpuexp.clock()
code, _, stderr = run("--arch sm_90 --quiet -o out.csv k.lua")
local waited = gpuexp.clock() - started
T.eq(code, 7, "a FIFO nothing reads at OUT: " .. stderr)
T.ok(stderr:find("cannot write out.csv: it is a FIFO that nothing reads (waited 3 s)", 1, true), stderr)
T.ok(waited >= 2.9 and waited < 10, "a bounded wait: " .. waited)
T.eq(kind_of(work .. "/out.csv.lock"), nil, "the lock released")
T.eq(kind_of(work .. "/out.csv"), "fifo", "the FIFO left as it was")
-- at compare -o, nothing reading it: the same
code, _, stderr = run(compare .. "fifo")
T.ok(code == 7 and stderr:find("it is a FIFO that nothing reads", 1, true), "compare -o a FIFO nothing reads: " .. stderr)
-- a report inside a folder (a name gpuexp makes up): refused, the other pages written
gpuexp.mkdir(work .. "/site")
sh("mkfifo site/index.html")
started = gpuexp.clock()
code, _, stderr = run("history --history h.sqlite site site")
T.ok(code == 7 and stderr:find("site/index.html: it is a FIFO", 1, true), "a FIFO in the site: " .. stderr)
T.ok(gpuexp.clock() - started < 2, "refused at once")
-- another user's FIFO named as the output, with a reader: not written
sh("mkfifo theirs.fifo && chown nobody theirs.fifo && (timeout 5 cat theirs.fifo > heard.txt &)")
code, _, stderr = run(compare .. "theirs.fifo")
T.ok(code == 7 and stderr:find("cannot write theirs.fifo: it is a FIFO that belongs to another user (uid ", 1, true),
  "another user's FIFO: " .. stderr)
sh("echo > theirs.fifo") -- the reader ends
-- a FIFO of the test's own with a reader, named: written
sh("mkfifo ours.fifo && (timeout 5 cat ours.fifo > heard.txt &)")
T.eq(run(compare .. "ours.fifo"), 0, "a FIFO named, with a reader")
os.execute("sleep 0.2")
T.ok((read("heard.txt") or ""):find("1 same", 1, true), "its reader got the report")

T.eq(io.popen("find " .. work .. " -name '.gpuexp-*'"):read("a"), "", "no temporary left")
T.done()
