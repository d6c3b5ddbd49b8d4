-- Commits checked out in temporary git worktrees, for the commands that measure a script at
-- another commit (bisect, ab): git and the build run as every child of gpuexp runs (no shell for
-- git, its own process group, ended with gpuexp on a stop signal, a time limit for the build), a
-- script's place in its repository, a worktree added (and built) and removed, and the folder they
-- live in: locked while its command runs, so a folder left by a killed run is found and removed by
-- the next one.
local M = {}

local meta = require("gpuexp.store.meta")

M.BUILD_TIMEOUT_S = require("gpuexp.catalog").BUILD_TIMEOUT_S -- a build that hangs is ended here (bisect's --build-timeout sets its own)

-- Runs argv (no shell): its standard output, whether it exited 0, the stop signal that ended
-- gpuexp's wait (0 when none) and whether its time limit ended it.
function M.run(argv, options)
  options = options or {}
  if not options.output then options.capture = true end
  local code, stop, timed_out, output = gpuexp._process.run(argv, options)
  return output or "", code == 0 and not timed_out, stop, timed_out
end
local run = M.run

-- git's output in repo with the trailing space cut, or nil when it failed.
function M.git(repo, ...)
  local output, ok = run({"git", "-C", repo, ...})
  return ok and output:gsub("%s+$", "") or nil
end
local git = M.git

-- M.locate(script) -> repository root, the script's path inside it; or nil and why.
function M.locate(script)
  local script_dir = script:match("^(.*)/[^/]*$") or "."
  local repo = git(script_dir, "rev-parse", "--show-toplevel")
  if not repo then return nil, script .. " is not in a git repository" end
  local script_real = gpuexp._realpath(script)
  local repo_real = gpuexp._realpath(repo)
  if not script_real or script_real:sub(1, #repo_real + 1) ~= repo_real .. "/" then
    return nil, script .. " is not inside " .. repo
  end
  return repo, script_real:sub(#repo_real + 2)
end

-- M.commit(repo, rev) -> the full commit id, or nil.
function M.commit(repo, rev) return git(repo, "rev-parse", "--verify", "--end-of-options", rev .. "^{commit}") end

-- The folders of runs of this command that were killed (kill -9, a lost machine): each run holds a
-- lock on its folder's owner.lock while it runs, and so does every build and measurement it starts,
-- so a folder whose lock can be taken has no owner and nothing running in it (taking the lock
-- ends what a killed run left holding it). A build or measurement named in running.pid is ended
-- too, the folder removed with its worktrees, and the repository forgets them (git worktree prune).
local function clean_leftovers(temporary, command, say)
  local listing = run({"sh", "-c", 'for d in "$1"/gpuexp-"$2".*; do [ -f "$d/owner.lock" ] && printf "%s\\n" "$d"; done',
    "sh", temporary, command})
  for folder in listing:gmatch("[^\n]+") do
    local lock = folder .. "/owner.lock"
    local locked, note = gpuexp._process.lock(lock)
    if locked then
      local ended = gpuexp._process.end_recorded(folder .. "/running.pid") or
        (note or ""):find("ended what it left running", 1, true)
      if ended then say("ended the build or measurement a killed " .. command .. " left running in " .. folder) end
      local repo = meta.read_all(folder .. "/repo")
      run({"rm", "-rf", "--", folder})
      gpuexp._process.unlock(lock)
      if repo and repo ~= "" then git(repo, "worktree", "prune") end
      say("removed " .. folder .. ", left by " .. (command:find("^[aeiou]") and "an " or "a ") .. command ..
        " that was killed")
    end
  end
end

-- M.work_folder(command, repo, say) -> a folder of its own ($TMPDIR, else /tmp), made now and
-- locked until M.clean; or nil and why. Folders that killed runs of the command left are removed
-- first (say tells the user).
function M.work_folder(command, repo, say)
  local temporary = os.getenv("TMPDIR") or "/tmp"
  clean_leftovers(temporary, command, say or function() end)
  local made, created = run({"mktemp", "-d", temporary .. "/gpuexp-" .. command .. ".XXXXXXXX"})
  local work = made:gsub("%s+$", "")
  if not created or work == "" then return nil, "cannot create a folder in " .. temporary .. " (mktemp -d failed)" end
  -- shared with the builds and measurements it starts: a killed run's folder is taken (and removed)
  -- only once all of them have ended
  local locked, why = gpuexp._process.lock(work .. "/owner.lock", true)
  local note = locked and io.open(work .. "/repo", "w")
  if note then note:write(repo or ""); note:close() end
  if not locked or not note then
    run({"rm", "-rf", "--", work})
    return nil, "cannot set up " .. work .. ": " .. tostring(why or "cannot write its repo file")
  end
  return work
end

-- M.add(repo, tree, commit, work [, build, log, build_timeout_s]) -> true, or nil, why and the exit
-- code of an interrupted run (128 + the signal): the commit checked out at tree (detached), then
-- the build command run there by sh in its own group, its output in log, ended after
-- build_timeout_s (the group recorded in work/running.pid while it runs).
function M.add(repo, tree, commit, work, build, log, build_timeout_s)
  local _, added, stop = run({"git", "-C", repo, "worktree", "add", "--detach", tree, commit})
  if stop ~= 0 then return nil, "interrupted", 128 + stop end
  if not added then return nil, "git worktree add failed" end
  if build then
    local _, built, stopped, timed_out = run({"sh", "-c", build}, {directory = tree, output = log or "/dev/null",
      timeout_s = build_timeout_s, record = work .. "/running.pid"})
    if stopped ~= 0 then return nil, "interrupted", 128 + stopped end
    if timed_out then
      return nil, string.format("the build ran past its %g s limit (--build-timeout) and was ended", build_timeout_s)
    end
    if not built then return nil, "the build command failed (" .. build .. ")" end
  end
  return true
end

function M.remove(repo, tree) run({"git", "-C", repo, "worktree", "remove", "--force", tree}) end

-- The folder and the worktrees it held removed, whatever happened; its lock let go.
function M.clean(repo, work)
  run({"rm", "-rf", "--", work})
  gpuexp._process.unlock(work .. "/owner.lock")
  if repo then git(repo, "worktree", "prune") end
end

return M
