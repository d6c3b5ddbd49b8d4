-- A claim is its records (issue 34): every figure of README.md, docs/ and bench/RESULTS.md is a claim
-- of bench/claims/*.tsv, and bench/claims.lua recomputes each from its raw record in bench/ and
-- checks that the doc still says it. Here: the whole inventory checks (claims waiting for
-- bench/remeasure.sh's records are pending, not failures); then, in a copy of the docs and bench/,
-- a number changed in a doc, a record removed, a record's value changed, a malformed inventory
-- line and a figure marked "not kept" stated again each fail with their reason, and records that
-- arrive for a pending claim are checked, then written into the doc by `update`. Last, a GPU
-- record's header (tests/gpu/header.sh) names its commit or refuses to run.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = arg[1] or "./gpuexp"
local root = gpuexp.script_dir .. "/../.."

-- the checker's exit code and output, on a root and the claims named
local function check(on, ...)
  local words = {T.quote(binary), "--quiet", "--no-plan", "--inline", T.quote(root .. "/bench/claims.lua"), "--root", T.quote(on)}
  for _, word in ipairs({...}) do words[#words + 1] = T.quote(word) end
  local pipe = assert(io.popen(table.concat(words, " ") .. " 2>&1"))
  local text = pipe:read("a")
  local _, _, code = pipe:close()
  return code, text
end

-- the whole inventory, on the repository itself
local code, text = check(root)
local total, checked, pending, not_kept, failed =
  text:match("(%d+) claims: (%d+) checked against their records, (%d+) pending re%-measurement %(bench/remeasure%.sh%), (%d+) not kept; (%d+) failed")
T.ok(total, "the checker's summary line:\n" .. text)
T.eq(failed, "0", "claims failing:\n" .. text)
T.eq(code, 0, "the checker's exit code")
T.ok(tonumber(checked) >= 400, "at least 400 claims checked against their records: " .. checked)
print(string.format("%s claims: %s checked, %s pending re-measurement, %s not kept", total, checked, pending, not_kept))

-- a copy to break: the docs, bench/ and the offline tests a claim runs
local copy = T.temporary_directory()
assert(os.execute(string.format("cp -R %s/README.md %s/docs %s/bench %s/ && mkdir -p %s/tests && cp -R %s/tests/lua %s/tests/",
  T.quote(root), T.quote(root), T.quote(root), T.quote(copy), T.quote(copy), T.quote(root), T.quote(copy))))
local function edit(path, from, to)
  local text_of = assert(T.read(copy .. "/" .. path), path)
  local s, e = text_of:find(from, 1, true)
  assert(s, "no '" .. from .. "' in " .. path)
  T.write(copy .. "/" .. path, text_of:sub(1, s - 1) .. to .. text_of:sub(e + 1))
end

T.eq((check(copy, "atomics.*")), 0, "the copy checks as the repository does")

-- a number changed in a doc
edit("docs/explanation/h200-results.md", "**223x** slower", "**224x** slower")
code, text = check(copy, "atomics.slowdown")
T.eq(code, 1, "a doc's number changed: exit 1")
T.ok(text:find("FAIL atomics.slowdown (docs/explanation/h200-results.md, bench/claims/h200-results.tsv:", 1, true) and
  text:find("the doc says 224, the record gives 223", 1, true), "the claim, its doc and both values named:\n" .. text)
edit("docs/explanation/h200-results.md", "**224x** slower", "**223x** slower")

-- a record gone
os.rename(copy .. "/bench/h200/atomics/reduction_atomics.csv", copy .. "/moved.csv")
code, text = check(copy, "atomics.v1_ms")
T.eq(code, 1, "a record missing: exit 1")
T.ok(text:find("its record is missing: bench/h200/atomics/reduction_atomics.csv", 1, true), "the missing record named:\n" .. text)
os.rename(copy .. "/moved.csv", copy .. "/bench/h200/atomics/reduction_atomics.csv")

-- a record's value changed: v1's median 7.369567871 ms
edit("bench/h200/atomics/reduction_atomics.csv", ",7.369567871,", ",7.469567871,")
code, text = check(copy, "atomics.v1_ms")
T.eq(code, 1, "a record's value changed: exit 1")
T.ok(text:find("the record gives 7.47, the inventory says 7.37", 1, true), "both values:\n" .. text)
edit("bench/h200/atomics/reduction_atomics.csv", ",7.469567871,", ",7.369567871,")

-- a malformed inventory line, and a figure marked not kept that the doc states again
T.write(copy .. "/bench/claims/zz_test.tsv", "# broken on purpose\nbad.line\tkept\tREADME.md\n" ..
  "old.roofline\tnot-kept\tdocs/explanation/h200-results.md\tper thread and stopped at {} TB/s\t2.37\t-\t-\t-\n")
code, text = check(copy, "old.roofline")
T.eq(code, 1, "a malformed line: exit 1")
T.ok(text:find("bench/claims/zz_test.tsv:2: 3 fields, expected 8", 1, true), "the line named:\n" .. text)
T.ok(not text:find("FAIL old.roofline", 1, true), "the figure not kept is not in the doc")
edit("docs/explanation/h200-results.md", "stopped at 2.36 TB/s", "stopped at 2.37 TB/s")
code, text = check(copy, "old.roofline")
T.ok(text:find("FAIL old.roofline", 1, true) and text:find("the doc states it again", 1, true), "stated again:\n" .. text)
edit("docs/explanation/h200-results.md", "stopped at 2.37 TB/s", "stopped at 2.36 TB/s")
os.remove(copy .. "/bench/claims/zz_test.tsv")

-- a pending claim whose records arrive (bench/remeasure.sh's restart_cost/): checked, then updated
-- (the copy starts without them, whether or not the tree has them yet)
assert(os.execute("rm -rf " .. T.quote(copy .. "/bench/remeasure")))
code, text = check(copy, "restart.*")
T.eq(code, 0, "pending claims pass while the doc says their figure")
T.ok(text:find("4 claims: 0 checked against their records, 4 pending", 1, true), "pending:\n" .. text)
gpuexp.mkdir(copy .. "/bench/remeasure")
gpuexp.mkdir(copy .. "/bench/remeasure/restart_cost")
T.write(copy .. "/bench/remeasure/restart_cost/restart_cost.meta.json",
  '{"parts": [{"restarts": [{"seconds": 0.2}, {"seconds": 0.25}, {"seconds": 0.21}, {"seconds": 0.19}, {"seconds": 0.22}]}]}')
T.write(copy .. "/bench/remeasure/header.txt", "commit: 0123abc [from GPUEXP_COMMIT]\ngpu: 0, NVIDIA H100 80GB HBM3, GPU-x, 580\n")
code, text = check(copy, "restart.*")
T.eq(code, 1, "records arrived, the doc not updated: exit 1")
T.ok(text:find("FAIL restart.median", 1, true) and text:find("the record gives 0.21 s, the inventory says [%d.]+ s"),
  "the new figure:\n" .. text)
code, text = check(copy, "update", "restart.*")
T.eq(code, 0, "update rewrites the docs' figures:\n" .. text)
local page = T.read(copy .. "/docs/howto/unattended.md")
T.ok(page:find("Measured on an H100, a restart", 1, true) and page:find("takes **0.21 s** median (0.190-0.250 s over 5 restarts;", 1, true),
  "the doc says the records' figures:\n" .. page:match("Measured on an [^\n]*\n[^\n]*"))
code, text = check(copy, "restart.*")
T.eq(code, 0, "and then checks")
T.ok(text:find("4 claims: 4 checked against their records, 0 pending", 1, true), "checked:\n" .. text)

-- an anchor that is the figure alone (a whole table row): update writes the new row and nothing else
-- (an empty side once became a position capture: "8455| row |8555")
local readme = T.read(copy .. "/README.md")
T.write(copy .. "/README.md", readme .. "\n| zz row | 1.00 ms |\n")
gpuexp.mkdir(copy .. "/bench/zz")
T.write(copy .. "/bench/zz/row.txt", "| zz row | 1.00 ms |\n")
T.write(copy .. "/bench/claims/zz_test.tsv", "zz.row\tkept\tREADME.md\t{}\t| zz row | 1.00 ms |\tbench/zz/row.txt\tcat bench/zz/row.txt\t-\n")
T.eq((check(copy, "zz.row")), 0, "a whole-line claim checks")
T.write(copy .. "/bench/zz/row.txt", "| zz row | 2.50 ms |\n")
T.eq((check(copy, "zz.row")), 1, "the record moved, the doc not: exit 1")
code, text = check(copy, "update", "zz.row")
T.eq(code, 0, "update rewrites a whole-line figure:\n" .. text)
T.eq(T.read(copy .. "/README.md"), readme .. "\n| zz row | 2.50 ms |\n", "the row replaced, nothing around it")
T.eq((check(copy, "zz.row")), 0, "and then checks")
os.remove(copy .. "/bench/claims/zz_test.tsv")

-- a GPU record names its commit: from $GPUEXP_COMMIT, .gpuexp-commit or git, else nothing runs
gpuexp.mkdir(copy .. "/tests/gpu")
assert(os.execute("cp " .. T.quote(root .. "/tests/gpu/header.sh") .. " " .. T.quote(root .. "/tests/gpu/run_all.sh") .. " " ..
  T.quote(copy .. "/tests/gpu/")))
local build = binary:match("^(.*)/[^/]*$") or "."
local function run(command)
  local pipe = assert(io.popen(command .. " 2>&1"))
  local out = pipe:read("a")
  local _, _, rc = pipe:close()
  return rc, out
end
local rc, out = run("env -u GPUEXP_COMMIT sh " .. T.quote(copy .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.eq(rc, 2, "no commit known: exit 2")
T.ok(out:find("no commit known for", 1, true) and out:find("a GPU record must name what it measured", 1, true), out)
rc, out = run("env -u GPUEXP_COMMIT sh " .. T.quote(copy .. "/tests/gpu/run_all.sh") .. " " .. T.quote(build) .. " " ..
  T.quote(copy .. "/logs") .. " test_launch")
T.eq(rc, 2, "the suite refuses to run without a commit")
T.ok(not T.read(copy .. "/logs/test_launch.log"), "and runs no test")
rc, out = run("GPUEXP_COMMIT=0123abcdef sh " .. T.quote(copy .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.eq(rc, 0, "a commit from the environment")
T.ok(out:find("commit: 0123abcdef [from GPUEXP_COMMIT]", 1, true) and out:find("\ngpu: ", 1, true) and out:find("\ndate: ", 1, true), out)
T.write(copy .. "/.gpuexp-commit", "fedcba9876\n")
rc, out = run("env -u GPUEXP_COMMIT sh " .. T.quote(copy .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.eq(rc, 0, "a commit from .gpuexp-commit")
T.ok(out:find("commit: fedcba9876 [from .gpuexp-commit]", 1, true), out)
-- a declared commit wins over a .git the copy carries (the lent machine's copy held a stale one)
assert(os.execute("git -C " .. T.quote(copy) .. " init -q && git -C " .. T.quote(copy) .. " -c user.name=t -c user.email=t@t " ..
  "commit -q --allow-empty -m stale"))
rc, out = run("env -u GPUEXP_COMMIT sh " .. T.quote(copy .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.ok(rc == 0 and out:find("commit: fedcba9876 [from .gpuexp-commit]", 1, true), "declared before git: " .. out)
rc, out = run("GPUEXP_COMMIT=0123abcdef sh " .. T.quote(copy .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.ok(rc == 0 and out:find("commit: 0123abcdef [from GPUEXP_COMMIT]", 1, true), "the environment first: " .. out)
os.remove(copy .. "/.gpuexp-commit")
rc, out = run("env -u GPUEXP_COMMIT sh " .. T.quote(copy .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.ok(rc == 0 and out:find("[from git]", 1, true), "git last: " .. out)
rc, out = run("sh " .. T.quote(root .. "/tests/gpu/header.sh") .. " " .. T.quote(build))
T.eq(rc, 0, "the repository's own header")
T.ok(out:match("commit: %x+ %([^)]+%) %[from git%]") or out:find("[from GPUEXP_COMMIT]", 1, true) or
  out:find("[from .gpuexp-commit]", 1, true), out)
print("ok " .. arg[0])
