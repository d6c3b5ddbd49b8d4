-- The tuning study's full measurement (bench/tune/study.lua, referee.lua): at least 50 samples and
-- 50 ms, to 1% noise, 200 samples or 0.25 s; racing's short levels scale the time down to 1 ms and
-- the samples to 5.
local defaults = gpuexp.measure_defaults
defaults.min_time_ms = 50
defaults.min_samples = 50
defaults.max_samples = 200
defaults.warmup = 2
defaults.max_noise_pct = 1
defaults.timeout_s = 0.25
