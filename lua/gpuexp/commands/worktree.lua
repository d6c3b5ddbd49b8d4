-- Commits checked out in temporary git worktrees, for the commands that measure a script at
-- another commit (bisect, ab): the shell and git calls, a script's place in its repository, a
-- worktree added (and a build command run in it) and removed, and the folder they live in.
local M = {}

function M.quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end
local quote = M.quote

-- Runs a shell command; its output (stdout) and whether it exited 0.
function M.shell(command)
  local pipe = io.popen(command .. " 2>/dev/null")
  local output = pipe:read("a")
  local ok = pipe:close()
  return output, ok == true
end

-- git's output in repo with the trailing space cut, or nil when it failed.
function M.git(repo, arguments)
  local output, ok = M.shell("git -C " .. quote(repo) .. " " .. arguments)
  return ok and output:gsub("%s+$", "") or nil
end

-- M.locate(script) -> repository root, the script's path inside it; or nil and why.
function M.locate(script)
  local script_dir = script:match("^(.*)/[^/]*$") or "."
  local repo = M.git(script_dir, "rev-parse --show-toplevel")
  if not repo then return nil, script .. " is not in a git repository" end
  local script_real = gpuexp._realpath(script)
  local repo_real = gpuexp._realpath(repo)
  if not script_real or script_real:sub(1, #repo_real + 1) ~= repo_real .. "/" then
    return nil, script .. " is not inside " .. repo
  end
  return repo, script_real:sub(#repo_real + 2)
end

-- M.commit(repo, rev) -> the full commit id, or nil.
function M.commit(repo, rev) return M.git(repo, "rev-parse --verify " .. quote(rev .. "^{commit}")) end

-- A folder of its own for a command's worktrees and logs ($TMPDIR, else /tmp), made now.
function M.work_folder(command)
  local path = string.format("%s/gpuexp-%s-%s", os.getenv("TMPDIR") or "/tmp", command,
    gpuexp.hash(string.format("%.9f %s", gpuexp.clock(), tostring({}))):sub(1, 10))
  gpuexp.mkdir(path)
  return path
end

-- M.add(repo, tree, commit [, build, log]) -> true, or nil and why: the commit checked out at tree
-- (detached), then the build command run there through the shell, its output in log.
function M.add(repo, tree, commit, build, log)
  local added = M.shell(string.format("git -C %s worktree add --detach %s %s >/dev/null 2>&1 && echo ok", quote(repo),
    quote(tree), quote(commit)))
  if not added:find("ok") then return nil, "git worktree add failed" end
  if build then
    local _, built = M.shell(string.format("cd %s && (%s) >%s 2>&1", quote(tree), build, quote(log or "/dev/null")))
    if not built then return nil, "the build command failed (" .. build .. ")" end
  end
  return true
end

function M.remove(repo, tree)
  M.shell(string.format("git -C %s worktree remove --force %s", quote(repo), quote(tree)))
end

-- The folder and the worktrees it held removed, whatever happened.
function M.clean(repo, work)
  M.shell("rm -rf " .. quote(work))
  if repo then M.shell("git -C " .. quote(repo) .. " worktree prune") end
end

return M
