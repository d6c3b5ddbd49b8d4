-- The docs runner (run_docs.lua) on planted pages: a page whose blocks all pass, and pages with an
-- unknown or missing tag, output that differs from what its block printed, failing blocks, a block
-- that is not JSON or not Lua, and broken links. Each planted fault must fail the runner, named.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "usage: test_runner.lua BINARY")
local runner = gpuexp.script_dir .. "/run_docs.lua"

local function run(page)
  local ws = T.workspace(binary)
  local code, stdout, stderr = ws.run(string.format("--quiet --no-plan '%s' '%s' offline tests/docs/fixtures/%s",
    runner, binary, page))
  return code, stdout .. stderr
end

local code, output = run("good.md")
T.eq(code, 0, "good.md passes: " .. output)
T.ok(output:find("2 blocks run, 2 outputs compared, 1 kernel sources written, 1 excerpts compiled, 1 set-up blocks " ..
  "skipped, 1 GPU blocks left for the gpu label, 1 skipped for a missing program, 2 links checked", 1, true),
  "good.md's counts: " .. output)
T.ok(output:find("skipped tests/docs/fixtures/good.md:51 (needs gpuexp-no-such-program, which is not on PATH here)", 1,
  true), "a block that needs a missing program is said to be skipped: " .. output)
T.ok(output:find("skipped tests/docs/fixtures/good.md:39 (sh setup", 1, true), "the set-up block is said to be skipped")

code, output = run("unknown_tag.md")
T.eq(code, 1, "unknown_tag.md fails")
for _, line in ipairs({3, 7, 11}) do
  T.ok(output:find("unknown_tag.md:" .. line .. ": unknown block tag", 1, true), "the tag at line " .. line .. ": " .. output)
end

code, output = run("wrong_output.md")
T.eq(code, 1, "wrong_output.md fails")
T.ok(output:find("wrong_output.md:7: the output shown is not what the block above printed", 1, true), output)
T.ok(output:find("wrong_output.md:17: the output shown is not what the block above printed", 1, true),
  "a number that differs is a wrong output: " .. output)
T.ok(output:find("wrong_output.md:27: the output shown is not what the block above printed", 1, true),
  "spaces that differ are a wrong output: " .. output)
T.ok(output:find("wrong_output.md:37: ```text measured is for the output of a block run on a GPU", 1, true),
  "measured after an offline block is refused: " .. output)
T.ok(output:find("4 failure(s)", 1, true), "four failures, no other: " .. output)

code, output = run("failing_block.md")
T.eq(code, 1, "failing_block.md fails")
T.ok(output:find("failing_block.md:3: ```lua exited with 1", 1, true), "the failing lua block: " .. output)
T.ok(output:find("planted", 1, true), "its error is shown")
T.ok(output:find("failing_block.md:7: ```sh exited with 1", 1, true), "bash -e stops at false: " .. output)
T.ok(output:find("--- stdout\nbefore\n--- stderr", 1, true), "nothing after the failing command ran: " .. output)
T.ok(output:find("failing_block.md:11: does not compile", 1, true), "the excerpt is compiled: " .. output)
T.ok(output:find("failing_block.md:15: not JSON", 1, true), "the JSON is parsed: " .. output)

-- the set-up that puts gpuexp on PATH: run in a copy of the repository, with apt-get a no-op and
-- DESTDIR's bin on PATH; one that installs nothing fails
code, output = run("install.md")
T.eq(code, 1, "install.md fails: " .. output)
T.ok(output:find("ok tests/docs/fixtures/install.md:3 sh install", 1, true), "the block that installs passes: " .. output)
T.ok(output:find("1 outputs compared", 1, true), "its output is compared: " .. output)
T.ok(output:find("install.md:18: ```sh install exited with 1", 1, true) and
  output:find("the set-up put no gpuexp on PATH", 1, true), "a set-up that installs nothing fails: " .. output)
T.ok(output:find("1 failure(s)", 1, true), "one failure: " .. output)

code, output = run("bad_links.md")
T.eq(code, 1, "bad_links.md fails")
T.ok(output:find("link to nope.md: no such file", 1, true), output)
T.ok(output:find("link to good.md#nope: no such heading", 1, true), output)
T.ok(not output:find("a-section", 1, true) and not output:find("example.com", 1, true), "good links pass")
T.ok(output:find("bad_links.md:9: the block is never closed", 1, true), output)
T.ok(output:find("bad_links.md:5: the heading 'A heading with nothing under it' has nothing under it", 1, true), output)
T.ok(not output:find("'Another'", 1, true), "a heading with a block under it is not empty: " .. output)
T.done()
