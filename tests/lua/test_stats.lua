-- Significance from samples (judge/stats.lua) and compare's use of it: the Mann-Whitney p-value on
-- textbook cases, the bootstrap interval on samples with a known shift, and compare --rule
-- mannwhitney on runs with samples files: an unchanged run is same, a 5% slower one slower with a
-- tiny p and an interval around +5%, a 0.3% shift significant yet same (under the floor).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local stats = require("gpuexp.judge.stats")
local binary = assert(arg[1], "the gpuexp binary is the first argument")

-- 1..5 against 6..10: U = 0; normal approximation with continuity, z = 12 / 4.787: p = 0.0122
local p, u = stats.mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10})
T.eq(u, 0, "U of a sample all below the other")
T.near(p, 0.0122, 0.0005, "p of 1..5 against 6..10")
-- ties: ranks averaged (2s share 3, 3s share 6), variance corrected: U = 3, p = 0.172
p, u = stats.mann_whitney({1, 2, 2, 3}, {2, 3, 3, 4})
T.eq(u, 3, "U with ties")
T.near(p, 0.172, 0.002, "p with the tie correction")
T.eq(stats.mann_whitney({2, 2, 2}, {2, 2}), 1, "identical samples: p = 1")
T.near(stats.erfc(0), 1, 1e-7, "erfc(0)"); T.near(stats.erfc(1), 0.157299207, 1e-6, "erfc(1)")
T.eq(stats.median({5, 1, 4, 2, 3}), 3, "median, odd"); T.eq(stats.median({4, 1, 3, 2}), 2.5, "median, even")

-- samples of a known shape: base around 1.0 (+-1%), new 5% slower
local function samples(center, n, seed)
  local out, state = {}, seed
  for i = 1, n do
    state = (state * 1103515245 + 12345) % 2147483648
    out[i] = center * (1 + (state / 2147483648 - 0.5) * 0.02)
  end
  return out
end
local base, slow, same = samples(1.0, 3000, 1), samples(1.05, 3000, 2), samples(1.0, 3000, 3)
local low, high = stats.bootstrap_ratio(base, slow)
T.ok(low > 1.04 and high < 1.06 and low < 1.05 and high > 1.05, string.format("5%% shift: CI [%.4f, %.4f]", low, high))
low, high = stats.bootstrap_ratio(base, same)
T.ok(low < 1 and high > 1, string.format("no shift: CI [%.4f, %.4f] holds 1", low, high))
T.ok(stats.mann_whitney(base, same) > 0.01, "no shift: not significant")
T.ok(stats.mann_whitney(base, slow) < 1e-10, "5% shift: significant")
local again_low = stats.bootstrap_ratio(base, slow)
T.eq(again_low, stats.bootstrap_ratio(base, slow), "the same runs give the same interval (fixed seed)")

-- compare on runs with samples files, as every measured sweep writes them
local ws = T.workspace(binary)
local function run_file(name, center, seed)
  ws.write(name .. ".csv", "case,median_ms,noise_pct,samples,status,error\nx," .. string.format("%.6f", stats.median(
    samples(center, 500, seed))) .. ",0.6,500,ok,\n")
  local values = {}
  for i, v in ipairs(samples(center, 500, seed)) do values[i] = string.format("%.6f", v) end
  ws.write(name .. ".samples.csv", "case,field,values\nx,samples_ms," .. table.concat(values, " ") .. "\n")
  ws.write(name .. ".meta.json", '{"sweep": {"name": "s", "axes": [{"name": "case", "values": ["x"]}]}}\n')
end
run_file("base", 1.0, 11)
run_file("same", 1.0, 12)
run_file("slow", 1.05, 13)
run_file("shifted", 1.003, 14)
local json = require("cjson")
local function judged(rule, new)
  local code, stdout, stderr = ws.run(string.format("compare --json --rule %s base.csv %s.csv", rule, new))
  T.ok(code == 0 or code == 1, "compare: " .. stderr)
  return json.decode(stdout).points[1]
end
local e = judged("mannwhitney", "same")
T.eq(e.verdict, "same", "unchanged: same")
T.ok(e.p_value > 0.01, "unchanged: p " .. e.p_value)
e = judged("mannwhitney", "slow")
T.eq(e.verdict, "slower", "5% slower: slower")
T.ok(e.p_value < 1e-6 and e.ci_low_pct > 4 and e.ci_high_pct < 6, string.format("p %.2g, CI [%.2f, %.2f]", e.p_value,
  e.ci_low_pct, e.ci_high_pct))
e = judged("gpuexp", "slow")
T.ok(e.p_value and e.basis:find("Mann%-Whitney p="), "the default rule gives the p-value too: " .. e.basis)
e = judged("mannwhitney", "shifted")
T.eq(e.verdict, "same", "a 0.3% shift under the 2% floor: same, significant or not (" .. e.basis .. ")")
T.done()
