-- Invented line profiles for the dry mode (no GPU): each build's static line table (the cubin's
-- instructions, mapped to lines) with made-up counts and PC samples from a crude model: every
-- instruction of the loop body runs `iters` times a warp, every other once; a sample lands on an
-- instruction in proportion to its executions and a cost (the injected line's cost set so the
-- kernel slows by the case's target), with Poisson-like noise. It develops and tests the judge,
-- the command and the table without a GPU; no figure is ever published from it (every profile says
-- synthetic = true).
local M = {}

local WARPS = 132 * 8 * 8

-- A generator's normal deviate (Box-Muller) for the noise of a count.
local function noisy(rng, mean)
  if mean <= 0 then return 0 end
  local u1, u2 = math.max(rng.float(), 1e-12), rng.float()
  local z = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
  return math.max(0, math.floor(mean + z * math.sqrt(mean) + 0.5))
end

-- profile: a static line table (gpuexp.line_table); loop = {first, last} source lines of the loop
-- body; extra = {line, cost} the injected line's cost per execution (nil in the base).
function M.fill(profile, rng, iters, loop, extra, samples_per_cost)
  profile.synthetic = true
  profile.static = nil
  profile.metrics = {"inst_executed", "thread_inst_executed"}
  profile.reasons = {"selected", "long_scoreboard", "math_pipe_throttle", "barrier", "short_scoreboard"}
  local total_samples = 0
  for _, r in ipairs(profile.instructions) do
    local in_loop = r.line and r.line >= loop[1] and r.line <= loop[2]
    local executions = WARPS * (in_loop and iters or 1)
    r.counts = {executions, 32 * executions}
    local cost = 1
    local reason = "selected"
    if extra and r.line == extra.line then cost, reason = extra.cost, extra.reason or "long_scoreboard" end
    local expected = executions * cost * samples_per_cost
    local n = noisy(rng, expected)
    r.samples = n > 0 and {[reason] = n} or nil
    total_samples = total_samples + n
  end
  profile.sass = {done = true, passes = 1, seconds = 0}
  profile.pc = {done = true, launches = 1, period = 9, samples = total_samples, total_samples = total_samples, seconds = 0}
  return profile
end

return M
