-- Outputs written safely (issue 25, BAD 1 and 2 and the WEAK path cases), as root on a CI runner
-- in a shared folder would meet them: a device, a FIFO or a link named as OUT, a planted OUT.tmp,
-- a missing folder, an output naming a kernel or the script, a hard link, a full disk. Whatever
-- the case: what the user named and nothing else is written, and no temporary is left behind.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run
local root = io.popen("id -u"):read("l") == "0"

local function kind_of(path) -- "regular", "character", "fifo", "link", "directory", or nil
  local pipe = io.popen("stat -c %F " .. path .. " 2>/dev/null")
  local text = pipe:read("a")
  pipe:close()
  return text:match("^symbolic link") and "link" or text:match("^regular") and "regular" or
    text:match("^character") and "character" or text:match("^fifo") and "fifo" or
    text:match("^directory") and "directory" or nil
end
local function exists(path) return kind_of(path) ~= nil end

write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) return {median_ms = p.x} end}')
write("base.csv", "p,median_ms\na,1.0\nb,2.0\n")
write("new.csv", "p,median_ms\na,1.0\nb,2.0\n")
T.eq(run("--arch sm_90 --quiet --shard 0/2 -o part.csv k.lua"), 0, "share 0")
T.eq(run("--arch sm_90 --quiet --shard 1/2 -o part.csv k.lua"), 0, "share 1")
local parts = "part.shard-0-of-2.csv part.shard-1-of-2.csv"
T.eq(run("--arch sm_90 --quiet -o exported.csv k.lua"), 0, "a run to export")
T.eq(run("history --history h.sqlite record exported.csv"), 0, "recorded")

-- ---- BAD 1: a device or a FIFO named as the output is written in place, never replaced ----
-- /dev/null itself (every user can write it; as root the old code replaced the system's node)
local code, _, stderr = run("compare --axes p -o /dev/null base.csv new.csv")
T.eq(code, 0, "compare -o /dev/null: " .. stderr)
T.eq(kind_of("/dev/null"), "character", "/dev/null is still the device")
code, _, stderr = run("history --history h.sqlite export 1 -o /dev/null")
T.eq(code, 0, "history export -o /dev/null: " .. stderr)
T.eq(kind_of("/dev/null"), "character", "/dev/null is still the device after export")
T.ok(not exists("/dev/null.samples.csv"), "no file made up beside a device")
code, _, stderr = run("merge /dev/null " .. parts)
T.ok(code == 2 and stderr:find("/dev/null does not end in .csv", 1, true), "merge OUT must be a .csv: " .. stderr)
T.ok(not exists("/dev/null.meta.json"), "no metadata beside a device")
-- the same on nodes of the test's own (a device where root may make one, and a FIFO)
if root and os.execute("mknod " .. work .. "/null.csv c 1 3 2>/dev/null") then
  T.eq(run("compare --axes p -o null.csv base.csv new.csv"), 0, "compare -o a device")
  T.eq(run("merge null.csv " .. parts), 0, "merge into a device")
  T.eq(run("history --history h.sqlite export 1 -o null.csv"), 0, "export into a device")
  T.eq(kind_of(work .. "/null.csv"), "character", "the device node is still a device")
else
  io.stderr:write("note: no device node could be made here (not root); /dev/null was tested\n")
end
os.execute(string.format("mkfifo %s/pipe.txt && (cat %s/pipe.txt > %s/piped.txt &)", work, work, work))
code, _, stderr = run("compare --axes p --markdown -o pipe.txt base.csv new.csv")
T.eq(code, 0, "compare -o a FIFO: " .. stderr)
os.execute("sleep 0.2")
T.eq(kind_of(work .. "/pipe.txt"), "fifo", "the FIFO is still a FIFO")
T.ok((read("piped.txt") or ""):find("2 same", 1, true), "its reader got the report: " .. tostring(read("piped.txt")))
-- standard output by name
code, stdout = run("compare --axes p -o /dev/stdout base.csv new.csv")
T.ok(code == 0 and stdout:find("2 same", 1, true), "-o /dev/stdout writes to the standard output: " .. stdout)

-- ---- BAD 2: a planted OUT.tmp (or any temporary name) is never opened ----
write("victim.txt", "precious\n")
os.execute(string.format("ln -s %s/victim.txt %s/report.txt.tmp", work, work))
code, _, stderr = run("compare --axes p -o report.txt base.csv new.csv")
T.eq(code, 0, "compare beside a planted report.txt.tmp: " .. stderr)
T.eq(read("victim.txt"), "precious\n", "the planted link's target is untouched")
T.eq(kind_of(work .. "/report.txt"), "regular", "report.txt is a file of its own, not a link")
T.ok(read("report.txt"):find("2 same", 1, true), "with the report")
for _, name in ipairs({"merged.csv.tmp", "export.csv.tmp", "exported.meta.json.tmp", "site/index.html.tmp"}) do
  if name:find("/") then gpuexp.mkdir(work .. "/site") end
  os.execute(string.format("ln -s %s/victim.txt %s/%s", work, work, name))
end
T.eq(run("merge merged.csv " .. parts), 0, "merge beside a planted link")
T.eq(run("history --history h.sqlite export 1 -o export.csv"), 0, "export beside a planted link")
T.eq(run("--arch sm_90 --quiet -o exported.csv k.lua"), 0, "a run beside a planted metadata link")
T.eq(run("history --history h.sqlite site site"), 0, "the site beside a planted link")
T.eq(read("victim.txt"), "precious\n", "no planted link was written through")

-- a planted lock file link: refused (exit 7), its target never truncated or written
os.execute(string.format("ln -s %s/victim.txt %s/locked.csv.lock", work, work))
code, _, stderr = run("--arch sm_90 --quiet -o locked.csv k.lua")
T.ok(code == 7 and stderr:find("locked.csv.lock: it is a symbolic link (not followed)", 1, true), "a planted lock: " ..
  stderr)
T.eq(read("victim.txt"), "precious\n", "the planted lock link's target untouched")
T.eq(kind_of(work .. "/locked.csv.lock"), "link", "and the link left where it was")

-- ---- a link named as OUT: followed when it is this user's (or root's), refused when another's ----
os.execute(string.format("ln -s victim.txt %s/mine.txt", work))
T.eq(run("compare --axes p -o mine.txt base.csv new.csv"), 0, "a link of this user's")
T.eq(kind_of(work .. "/mine.txt"), "link", "the link is kept")
T.ok(read("victim.txt"):find("2 same", 1, true), "its target got the report")
write("victim.txt", "precious\n")
if root and os.execute(string.format("ln -s victim.txt %s/theirs.txt && chown -h nobody %s/theirs.txt", work, work)) then
  code, _, stderr = run("compare --axes p -o theirs.txt base.csv new.csv")
  T.eq(code, 7, "a link of another user: refused")
  T.ok(stderr:find("cannot write theirs.txt: it is a symbolic link that belongs to another user", 1, true), stderr)
  T.eq(read("victim.txt"), "precious\n", "its target untouched")
end
os.execute(string.format("ln -s nowhere.txt %s/dangling.txt", work))
code, _, stderr = run("compare --axes p -o dangling.txt base.csv new.csv")
T.ok(code == 7 and stderr:find("symbolic link to a file that does not exist; not followed", 1, true), stderr)
T.ok(not exists(work .. "/nowhere.txt"), "nothing made where a dangling link points")

-- ---- gpuexp plot's image: gnuplot draws into a temporary of gpuexp's, the image goes out as
-- every output does ----
if os.execute("command -v gnuplot > /dev/null") then
  write("xy.csv", "x,y\n1,1\n2,4\n")
  os.execute(string.format("mkfifo %s/pipe.svg && (cat %s/pipe.svg > %s/piped.svg &)", work, work, work))
  code, _, stderr = run("plot xy.csv --x x --y y -o pipe.svg")
  T.eq(code, 0, "plot -o a FIFO: " .. stderr)
  os.execute("sleep 0.2")
  T.eq(kind_of(work .. "/pipe.svg"), "fifo", "the FIFO is still a FIFO")
  T.ok((read("piped.svg") or ""):find("<svg", 1, true), "its reader got the image")
  os.execute(string.format("ln -s %s/victim.txt %s/plot.png.tmp", work, work))
  T.eq(run("plot xy.csv --x x --y y -o plot.png"), 0, "plot beside a planted link")
  T.eq(read("victim.txt"), "precious\n", "the planted link's target untouched")
  code, _, stderr = run("plot xy.csv --x x --y y -o no/such/p.png")
  T.ok(code == 7 and stderr:find("does not exist (it is not created)", 1, true), "plot into a missing folder: " .. stderr)
end

-- ---- nothing outside what the user named is created ----
code, _, stderr = run("compare --axes p -o no/such/dir/r.txt base.csv new.csv")
T.ok(code == 7 and stderr:find("the folder no/such/dir does not exist (it is not created)", 1, true), stderr)
code, _, stderr = run("--arch sm_90 --quiet -o no/such/dir/x.csv k.lua")
T.ok(code == 7 and stderr:find("the folder no/such/dir does not exist", 1, true), "a run's -o: " .. stderr)
code = run("history --history h.sqlite export 1 -o no/such/x.csv")
T.eq(code, 7, "export into a missing folder")
code = run("merge no/such/m.csv " .. parts)
T.eq(code, 7, "merge into a missing folder")
T.ok(not exists(work .. "/no"), "no folder tree was made")
local had_index = exists("/index.html")
code, _, stderr = run("history --history h.sqlite site ''")
T.ok(code == 2 and stderr:find("the folder's name is empty", 1, true), "site '': " .. stderr)
T.ok(had_index or not exists("/index.html"), "no /index.html written")
code, _, stderr = run("history --history h.sqlite site no/such/site")
T.ok(code == 7 and stderr:find("does not exist (it is not created)", 1, true), "site in a missing folder: " .. stderr)
-- the default output folder (results/) is gpuexp's own: made as before
T.eq(run("--arch sm_90 --quiet k.lua"), 0, "the default output")
T.ok(read("results/k.csv"), "results/k.csv made")

-- ---- an output never names a kernel or the script ----
gpuexp.mkdir(work .. "/kernels")
write("kernels/a.cu", "__global__ void a() {}\n")
code, _, stderr = run("--arch sm_90 --quiet -o kernels/a.cu k.lua")
T.ok(code == 2 and stderr:find("its output kernels/a.cu does not end in .csv", 1, true), "-o a.cu: " .. stderr)
T.eq(read("kernels/a.cu"), "__global__ void a() {}\n", "the kernel is intact")
write("x.meta.json", read("k.lua"))
code, _, stderr = run("--arch sm_90 --quiet -o x.csv x.meta.json")
T.ok(code == 2 and stderr:find("its output x.meta.json is the script itself", 1, true), "a script named x.meta.json: " ..
  stderr)
T.eq(read("x.meta.json"), read("k.lua"), "the script is intact")

-- ---- modes: a new output 0666 & ~umask, a replaced one keeps its mode ----
T.eq(run("compare --axes p -o fresh.txt base.csv new.csv", "umask 027;"), 0, "a new output")
T.eq(io.popen("stat -c %a " .. work .. "/fresh.txt"):read("l"), "640", "0666 & ~umask")
os.execute("chmod 600 " .. work .. "/fresh.txt")
T.eq(run("compare --axes p -o fresh.txt base.csv new.csv"), 0, "replaced")
T.eq(io.popen("stat -c %a " .. work .. "/fresh.txt"):read("l"), "600", "the replaced file's mode kept")

-- ---- a hard link to a CSV being written never gives two writers ----
T.eq(run("--arch sm_90 --quiet -o linked.csv k.lua"), 0, "a CSV")
local linked = read("linked.csv")
os.execute(string.format("ln %s/linked.csv %s/other.csv", work, work))
T.eq(run("--arch sm_90 --quiet -o other.csv k.lua", "SLOW=1"), 0, "a fresh run on the other name")
T.eq(read("linked.csv"), linked, "the first name keeps its content: a fresh run writes a file of its own")
os.execute(string.format("rm %s/other.csv && ln %s/linked.csv %s/other.csv", work, work, work))
code, _, stderr = run("--arch sm_90 --quiet --resume --allow-changed -o other.csv k.lua")
T.ok(code == 7 and stderr:find("it has 2 hard links", 1, true), "resume on a hard-linked CSV: refused: " .. stderr)

-- ---- a full disk (a file size limit: EFBIG) while replacing: exit 7, the old file whole ----
local lines = {"p,median_ms"}
for i = 1, 300 do lines[#lines + 1] = string.format("point%03d,%d.0", i, i) end
write("big.csv", table.concat(lines, "\n") .. "\n")
write("report.md", "the old report\n")
local full = "trap '' XFSZ; ulimit -f 2;" -- 1 KiB (sh's 512-byte blocks)
code, _, stderr = run("compare --axes p --markdown -o report.md big.csv big.csv", full)
T.eq(code, 7, "compare -o on a full disk: " .. stderr)
T.eq(read("report.md"), "the old report\n", "the old report is whole")
local merged = read("merged.csv")
T.eq(run("merge merged.csv " .. parts, "trap '' XFSZ; ulimit -f 0;"), 7, "merge on a full disk")
T.eq(read("merged.csv"), merged, "the earlier merged.csv is intact")

-- ---- no temporary is ever left behind ----
local left = io.popen("find " .. work .. " -name '.gpuexp-*'"):read("a")
T.eq(left, "", "no temporary left")
T.done()
