-- The A/B study's table (bench/ab_study.lua) from its raw output: every decision and the long runs'
-- samples. One builder for the study, which prints it as it ends, and for bench/recompute/ab.lua,
-- which rebuilds it from the files the study kept.
--   local lines = dofile("bench/ab_table.lua")(decisions, long_a, long_b, settings)
-- decisions: {kind = "aa" or "slower", verdict, nvbench, compare (each "same", "slower", "faster"),
-- gpu_s, wall_s, blocks, mde_pct}...; long_a, long_b: samples (ms); settings: {gpu, elements,
-- block_ms, study_s}.
return function(decisions, long_a, long_b, settings)
  local function summary(kind)
    local counts, n = {ab = 0, nvbench = 0, compare = 0}, 0
    local gpu, blocks, mde, wall = {}, {}, {}, {}
    for _, d in ipairs(decisions) do
      if d.kind == kind then
        n = n + 1
        if d.verdict ~= "same" then counts.ab = counts.ab + 1 end
        if d.nvbench ~= "same" then counts.nvbench = counts.nvbench + 1 end
        if d.compare ~= "same" then counts.compare = counts.compare + 1 end
        gpu[n], blocks[n], mde[n], wall[n] = d.gpu_s, d.blocks, d.mde_pct, d.wall_s
      end
    end
    assert(n > 0, "no decisions of kind " .. kind)
    return n, counts, gpuexp.stats(gpu), gpuexp.stats(blocks), gpuexp.stats(mde), gpuexp.stats(wall)
  end
  local lines = {}
  local function say(text) lines[#lines + 1] = text end
  local a_median = gpuexp.stats(long_a).median
  say(string.format("# gpuexp ab study: %s, SAXPY over %d elements (%.3f ms), blocks of about %g ms a side",
    settings.gpu, settings.elements, a_median, settings.block_ms))
  say("")
  say(string.format("Injected slowdown: B over 1%% more elements, %+.2f%% on 20 x 200 interleaved launches a side.",
    (gpuexp.stats(long_b).median / a_median - 1) * 100))
  say("")
  say("| comparison | decisions | gpuexp ab (paired) | NVBench's rule, same samples | compare's rule, same samples | GPU s per decision, median (max) | wall s, median (max) | blocks, median | detectable effect, median |")
  say("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
  local pairs, aa, aa_gpu, aa_blocks, aa_mde, aa_wall = summary("aa")
  say(string.format("| A/A: false calls | %d | %d (%.1f%%) | %d (%.1f%%) | %d (%.1f%%) | %.2f (%.2f) | %.2f (%.2f) | %g | %.2f%% |",
    pairs, aa.ab, 100 * aa.ab / pairs, aa.nvbench, 100 * aa.nvbench / pairs, aa.compare, 100 * aa.compare / pairs,
    aa_gpu.median, aa_gpu.max, aa_wall.median, aa_wall.max, aa_blocks.median, aa_mde.median))
  local power, slow, slow_gpu, slow_blocks, slow_mde, slow_wall = summary("slower")
  say(string.format("| 1%% slower: found | %d | %d (%.0f%%) | %d (%.0f%%) | %d (%.0f%%) | %.2f (%.2f) | %.2f (%.2f) | %g | %.2f%% |",
    power, slow.ab, 100 * slow.ab / power, slow.nvbench, 100 * slow.nvbench / power, slow.compare,
    100 * slow.compare / power, slow_gpu.median, slow_gpu.max, slow_wall.median, slow_wall.max, slow_blocks.median,
    slow_mde.median))
  say("")
  say(string.format("gpuexp ab: slower when the Wilcoxon signed-rank test of the block ratios rejects at 0.005 and the " ..
    "bootstrap 99.5%% interval is above 1; blocks added until a 1%% change is detectable at 90%% power or 30 s pass. " ..
    "Study time %.0f s.", settings.study_s))
  return lines
end
