-- Every command of gpuexp, its options, its exit codes and the environment variables it reads, in
-- one table. main.lua dispatches from it and the one command runner (commands/runner.lua) parses
-- every command's options from it (lua/gpuexp/engine/args.lua), the run's included; every
-- --help text, `gpuexp help`, the man page, the bash completion and docs/reference/cli.md
-- (`gpuexp help --reference`) are rendered from it (catalog_text.lua). Plain data: loading it needs
-- nothing but Lua.
--
-- The shape (keep it; add to it):
--   M.EXIT                 exit code names -> numbers (the only table of them: C keeps none)
--   M.commands[i]          {name =, summary =, usage =, about =, after =, options = {...}, exits = {...},
--                           arguments = "script" when the first argument that is not an option is a
--                           script (history: its subcommand) and the rest are its arguments (else
--                           options and arguments mix),
--                           and how it runs: module = "gpuexp.commands.x" (its run(fields, given,
--                           context), called by commands/runner.lua), native = true (its work is done in
--                           C, src/cli/: no script library is loaded for it), or run_option = "--x" (an
--                           alias of a run option)}
--   options[j]             ONE entry per option, all there is to know of it:
--     [1]                  "-o, --out PATH": the flags, then the argument's name (none: a flag; a
--                          name ending in "...", "--check NAME...": a flag, the names are arguments)
--     [2]                  the help text
--     field =              the key it sets in the parsed table (default: the long flag's name, "_" for
--                          "-": --max-evals -> max_evals); a run option's is its gpuexp.run_options key
--     type =               the argument's type: "string" (the default), "number", "integer" (with
--                          min =, max =, above = bounds), "seconds" (>= 0, 0: no limit), "choice"
--                          (choices = {...}), "list" (A,B -> {"A", "B"}), "path" (a file or folder
--                          name: '' is refused, never read as the default), "timeout", "shard", "only"
--                          (a run's, engine/options.lua) or a command's own (its module's TYPES)
--     what =               the value in words for the messages ("a GPU number": "--device needs a GPU
--                          number", "--device takes a GPU number, got 'x'"); default from the type
--     value =              what a flag sets (default true): --no-confirm sets confirm = false
--     default =            the field's value when the option is not given, written as it would be typed
--                          and read by its type (help and reference show it: never in the help text)
--     default_text =       what is used when the option is not given, in words, where that is no one
--                          value (the script's, the environment's, a night's): the field stays nil
--                          and the help says "(default: TEXT)"
--     repeatable = true    the field is the list of every value given (else the last one counts)
--     pass = true          handed on, as typed, to the runs the command starts (args.passed)
--     subcommand =, options = a line of a command with subcommands (gpuexp history): the subcommand it
--                          is (also = a second one sharing the line) and that subcommand's own entries,
--                          which args.subcommand gives with the command's (--history) beside them
--   exits[j]               {code, "what it means for this command"}
--   M.environment[i]       {name =, text =, read_by =}: every environment variable gpuexp reads
local M = {}

-- The exit codes, one meaning each across commands (a command's own text says what it means for
-- that command). C keeps none of its own (test_catalog checks it).
M.EXIT = {
  OK = 0, FAILED = 1, USAGE = 2, GPU = 3, COMPILE = 4, INCOMPLETE = 5, HISTORY = 6, WRITE = 7,
  INTERNAL = 70, BUSY = 75, HANGUP = 129, INTERRUPTED = 130, TERMINATED = 143,
}

-- Every command's standard output is checked as it exits (gx_output_check_stdout_at_exit): a
-- report lost on a full disk is this code, never 0 or 1. Said under each command's exit codes.
M.STDOUT_EXIT = {7, "the standard output could not be written (a full disk, a closed stream): what was printed is\n" ..
  "incomplete (every command)"}

-- A failure inside gpuexp itself (a bug: a Lua error in a command, not in the user's script): never
-- 0 (it did not work) and never 1 (that means "a regression" or "the script failed").
local internal_exit = {70, "internal error in gpuexp (a bug: the message and traceback say where; please report it)"}

-- The offline plan's architecture when no GPU is found and none is chosen (--arch).
M.PLAN_ARCH = "sm_90"
-- A sweep point's time limit unless --point-timeout says otherwise (a run's; each of bisect's
-- measurements); outside the points a supervised run's limit is never below it.
M.POINT_TIMEOUT_S = 300
-- A build's time limit (bisect's --build-timeout by default, and each of ab's commits): a build that
-- hangs is ended here.
M.BUILD_TIMEOUT_S = 3600
-- The line stage's time limit (nightly's and bisect's --lines-timeout): all its runs together.
M.LINES_TIMEOUT_S = 300

local run_exits = {
  {0, "ok"},
  {1, "the script raised an error, or a check in it failed"},
  {2, "usage: a bad option, a missing script, an option that does not fit the script"},
  {3, "GPU or driver: no driver, no GPU, or a CUDA call failed"},
  {4, "a kernel did not compile"},
  {5, "finished, but points failed: the run function raised an error, the point crashed or timed out\n" ..
    "(their rows say why; stderr gives the count and the first failure with the script's line)"},
  {6, "the history could not be written (the CSV files are kept)"},
  {7, "an output could not be written (a full disk): the run stopped, every row written is whole, and the " ..
    "resume command is printed"},
  {75, "another run is writing the same output (try later)"},
  {130, "interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (rows kept; --resume finishes)"},
}

M.commands = {
  {name = "run", module = "gpuexp.commands.run", summary = "run an experiment script (the default command)",
    usage = "gpuexp [options] SCRIPT.lua [script arguments...]",
    about = "Runs a Lua experiment script: compile kernels, launch, time, sweep, write CSV. A shipped\n" ..
      "experiment runs by name from any folder: gpuexp occupancy_sweep. `gpuexp help` lists the commands.",
    options = {
      {"-d, --device N", "use GPU N", type = "integer", min = 0, max = 1024, what = "a GPU number", default = 0},
      {"-o, --out PATH", "where the script's CSV goes: a .csv in a folder that exists (scripts read it\n" ..
        "as gpuexp.out; X.meta.json and X.samples.csv go beside it)", type = "path"},
      {"-q, --quiet", "no progress line", field = "quiet"},
      {"-a, --arch ARCH", "offline plan for ARCH (e.g. sm_86), no GPU used: kernels compiled for it,\n" ..
        "occupancy from the model, timing columns left empty", field = "plan_arch", type = "arch",
        what = "an architecture such as sm_86"},
      {"--no-plan", "with no GPU, fail (exit 3) instead of showing the plan for " .. M.PLAN_ARCH, field = "no_plan"},
      {"--point-timeout S", "end a sweep point after S seconds: row status 'timeout' (0 = no limit;\n" ..
        "a sweep's timeout_s wins)", field = "point_timeout", type = "timeout", default = M.POINT_TIMEOUT_S},
      {"--resume", "finish an interrupted run: only the points with no row run", field = "resume"},
      {"--allow-changed", "resume even though the script, its kernels or its axes changed", field = "allow_changed"},
      {"--devices LIST", "one worker per GPU (0,1,3 or all), points handed out as workers free up", field = "devices"},
      {"--allow-mixed", "let --devices mix GPU models", field = "allow_mixed"},
      {"--shard I/N", "run the I-th (0-based) of N static shares of every sweep's points\n" ..
        "(gpuexp merge joins them)", field = "shard", type = "shard",
        default_text = "a Slurm job array's share, from SLURM_ARRAY_TASK_ID/_MIN/_STEP/_COUNT"},
      {"--only 'A=V,B=W;A=X'", "run only the points with these axis values (';' between alternatives)", field = "only", type = "only"},
      {"--trace FILE.json", "a timeline of kernels, copies, synchronizations and driver calls (CUPTI),\n" ..
        "as Chrome trace events for Perfetto (ui.perfetto.dev) or chrome://tracing", field = "trace",
        type = "path"},
      {"--inline", "no worker process: the script runs in this process (debuggers)", field = "inline"},
      {"--diagnose", "diagnose every timed launch with counters (gpuexp diagnose --help)", field = "diagnose"},
      {"--lines DIR", "a line profile of every timed launch (PC samples and SASS counts by source line,\n" ..
        "the counts in a second run of the script in a process of its own; sources compiled with\n" ..
        "-lineinfo) written into DIR: gpuexp lines BASE_DIR NEW_DIR compares two runs (docs/howto/lines.md)",
        field = "lines", what = "a folder"},
      {"--lines-only KIND", "with --lines, one collector in this run: pc (PC samples) or sass (SASS counts)",
        field = "lines_only", type = "choice", choices = {"pc", "sass"}, what = "pc or sass"},
      {"--counters", "a row's counters: instructions and active lanes per instruction, DRAM and L2 bytes,\n" ..
        "L2 and L1 hit rates, sectors per global load and store, shared wavefronts per request, tensor\n" ..
        "pipe activity, achieved occupancy, the dominant stall, registers, spills, shared memory of the\n" ..
        "point's last timed launch (ctr_* columns, 4 replay passes on GH100; gpuexp nightly collects\n" ..
        "them to explain a regression; docs/explanation/what-changed.md)", field = "counters"},
      {"--profile", "each measured launch once, between cuProfilerStart and cuProfilerStop, in this\n" ..
        "process (gpuexp profile --help)", field = "profile"},
      {"--telemetry", "every measurement reads NVML: mean power (power_w), energy per launch (energy_j),\n" ..
        "temperature_c and the throttle reasons seen; columns of every sweep (telemetry_note: why not)",
        field = "telemetry"},
      {"--history PATH", "record the run (facts, rows, samples) in this SQLite history file", field = "history",
        type = "path"},
      {"--record", "the same, in gpuexp's own history file (gpuexp history --help says where)", field = "history",
        value = ""},
      {"--night ID", "record the run as part of gpuexp nightly's night ID (set by gpuexp nightly,\n" ..
        "with --night-kind nightly|confirm, --night-suite NAME and --night-experiment NAME)", field = "night"},
      {"--night-kind KIND", "nightly (the night's measurement) or confirm (a re-measure of suspects)", field = "night_kind"},
      {"--night-suite NAME", "the night's suite", field = "night_suite"},
      {"--night-experiment NAME", "the suite's experiment this run is", field = "night_experiment"},
      {"-h, --help", "this text"},
      {"-V, --version", "the versions of gpuexp, Lua, SQLite and the CUDA pieces found"},
    },
    arguments = "script",
    after = "Unattended runs: the script runs in a worker process that this one supervises; a point that\n" ..
      "crashes or hangs becomes a row, the next point runs in a fresh worker.",
    exits = run_exits},
  {name = "diagnose", run_option = "--diagnose", summary = "run a script and diagnose every launch it times",
    usage = "gpuexp diagnose [options] SCRIPT.lua [script arguments...]   (or gpuexp --diagnose ...)",
    about = "Runs the script and diagnoses every launch it times (kernel:measure, kernel:time) with the\n" ..
      "counters: Speed of Light compute and memory %, the dominant stalls, achieved against theoretical\n" ..
      "occupancy, FP32 intensity against the calibrated knee, and the telltales of contended atomics,\n" ..
      "bank conflicts, spills, divergence and uncoalesced loads; then a verdict (memory-bound,\n" ..
      "compute-bound, latency-bound, contended atomics, ...) with its evidence, printed and added to\n" ..
      "the point's row (diagnosis, diagnosis_evidence). --only A=V picks the points. Every option of a\n" ..
      "run applies (gpuexp --help). From a script: gpuexp.diagnose(kernel, launch).",
    exits = run_exits},
  {name = "profile", run_option = "--profile", summary = "hand a point to ncu or nsys: its launch once, in a capture range",
    usage = "gpuexp profile [--only 'A=V,...'] [options] SCRIPT.lua [script arguments...]   (or gpuexp --profile ...)",
    about = "Runs the script in this process (no worker) with every measured launch (kernel:measure,\n" ..
      "kernel:time, sequence:measure) made once after its warm-up, between cuProfilerStart and\n" ..
      "cuProfilerStop, so a profiler that waits for that range captures exactly the chosen points'\n" ..
      "launches. Each point runs inside an NVTX range named sweep/point (every run has them). It\n" ..
      "prints the command for each profiler:\n" ..
      "  ncu --profile-from-start off -o point gpuexp profile --only 'A=V' SCRIPT.lua\n" ..
      "  nsys profile --capture-range=cudaProfilerApi -o point gpuexp profile --only 'A=V' SCRIPT.lua\n" ..
      "The rows hold that one launch's time (samples 1, stop_reason profile). gpuexp changes no GPU\n" ..
      "setting.",
    exits = run_exits},
  {name = "info", native = true, module = "gpuexp.commands.info", summary = "every GPU's facts",
    usage = "gpuexp info [--device N]",
    about = "Every GPU's facts: name, UUID, PCI bus id, compute capability, SMs, clocks, memory and L2,\n" ..
      "shared memory and register limits, derived peak DRAM bandwidth and FP32 rate, and the\n" ..
      "driver, CUDA and NVRTC versions.",
    options = {{"-d, --device N", "one GPU only", type = "integer", min = 0, what = "a GPU number"},
      {"-h, --help", "this text"}},
    exits = {{0, "ok"}, {2, "usage"}, {3, "no driver or no GPU"}}},
  {name = "occupancy", native = true, module = "gpuexp.commands.occupancy", summary = "theoretical occupancy for any architecture, no GPU needed",
    usage = "gpuexp occupancy --arch ARCH --block N [--registers N] [--shared BYTES] [--barriers N]\n" ..
      "                 [--carveout max|driver|KIB]\n" ..
      "gpuexp occupancy --limits [--arch ARCH]",
    about = "One CSV row per combination. Every numeric option takes a list and ranges: --block\n" ..
      "128,256,512 --registers 16:64:8 (start:stop:step, stop included); --arch takes a list too.",
    options = {
      {"--arch ARCH", "architectures (sm_80,sm_90)", type = "archs"},
      {"--block N", "threads per block", type = "ranges"},
      {"--registers N", "registers per thread (0: registers do not limit)", type = "ranges", default = 0},
      {"--shared BYTES", "dynamic shared memory per block", type = "ranges", default = 0},
      {"--barriers N", "named barriers per block (0: barriers do not limit)", type = "ranges", default = 0},
      {"--carveout max|driver|KIB", "the L1/shared split: the most shared memory (max), the driver's\n" ..
        "choice, or a size", type = "carveout", default = "max"},
      {"--limits", "each architecture's limits, as CSV"},
      {"-h, --help", "this text"},
    },
    exits = {{0, "ok"}, {2, "usage"}}},
  {name = "metrics", native = true, module = "gpuexp.commands.metrics", summary = "CUPTI metric names, checks and replay passes",
    usage = "gpuexp metrics --list [--chip NAME | --device N]\n" ..
      "gpuexp metrics --check NAME... [--chip NAME | --device N]\n" ..
      "gpuexp metrics --chips",
    about = "With --chip (GH100, GA100, AD102, GB100, ...) no GPU is needed.",
    options = {
      {"--list", "every base metric, as name,type"},
      {"--check NAME...", "validity, unit and replay passes of metrics and presets"},
      {"--chips", "the chips this CUPTI knows"},
      {"--chip NAME", "a chip by name (no GPU)"},
      {"--device N", "the chip of GPU N", type = "integer", min = 0, max = 1024, what = "a GPU number", default = 0},
      {"-h, --help", "this text"},
    },
    exits = {{0, "ok"}, {1, "a metric checked is not valid"}, {2, "usage"}, {3, "no GPU, or CUPTI missing"}}},
  {name = "calibrate", module = "gpuexp.commands.calibrate", summary = "measure and cache this GPU's ceilings",
    usage = "gpuexp calibrate [--force]",
    about = "Measures this GPU's ceilings and caches them per GPU (UUID), driver and clocks: DRAM copy\n" ..
      "bandwidth (the best of cuMemcpyDtoD and copy kernels), L2 read bandwidth, shared-memory (L1)\n" ..
      "bandwidth, FP32 and FP64 FMA rates, tensor-core rates (mma.sync: FP16, BF16, TF32, INT8 from\n" ..
      "sm_80, FP8 from sm_89), pinned host-to-device and device-to-host bandwidth. Scripts read them\n" ..
      "with gpuexp.calibrate{} or gpuexp.ceilings(); roofline plots draw them.",
    options = {{"--force", "measure again"}, {"-h, --help", "this text"}},
    exits = {{0, "ok"}, {2, "usage"}, {3, "no GPU"}}},
  {name = "plot", module = "gpuexp.commands.plot", summary = "line plots and rooflines of a CSV",
    usage = "gpuexp plot FILE.csv --x COL --y COL [--by COL] -o OUT.png|OUT.svg [--logx] [--logy] [--title T]\n" ..
      "gpuexp plot --roofline FILE.csv --flops COL --bytes COL --time-ms COL [--by COL] -o OUT\n" ..
      "            [--peak-gflops G --peak-gbps B]",
    about = "Line plots of two CSV columns (one line per --by group) and log-log rooflines with this GPU's\n" ..
      "measured roofs (gpuexp calibrate) unless the peaks are given. Needs gnuplot (gnuplot-nox).",
    options = {
      {"--x COL", "the x column"}, {"--y COL", "the y column"}, {"--by COL", "one line per value of COL"},
      {"-o, --out FILE", "the image (.png or .svg)", type = "path"}, {"--logx", "logarithmic x"}, {"--logy", "logarithmic y"},
      {"--title T", "the title"}, {"--roofline", "a roofline instead of lines"},
      {"--flops COL", "the FLOP column (roofline)"}, {"--bytes COL", "the byte column (roofline)"},
      {"--time-ms COL", "the time column (roofline)"}, {"--peak-gflops G", "the compute roof", type = "number", above = 0},
      {"--peak-gbps B", "the memory roof", type = "number", above = 0}, {"-h, --help", "this text"},
    },
    exits = {{0, "ok"}, {2, "usage"}, {3, "gnuplot failed"}, {7, "the image could not be written"}}},
  {name = "merge", module = "gpuexp.commands.merge", summary = "join the shards of a sweep",
    usage = "gpuexp merge [--allow-mixed] OUT.csv PART.csv...",
    about = "Joins the CSVs written by `gpuexp --shard I/N` (one per share of the points) into OUT.csv in\n" ..
      "point order, with OUT.meta.json listing every part and OUT.samples.csv holding the parts'\n" ..
      "samples. The parts must come from the same script\n" ..
      "(hash), the same points and the same GPU model (their .meta.json files say so). Missing and\n" ..
      "duplicated points are listed. OUT.csv and its metadata are written through a temporary file\n" ..
      "and a rename (docs/explanation/threat-model.md: a device is written in place, no folder is\n" ..
      "created).",
    options = {{"--allow-mixed", "merge parts measured on different GPU models (listing them all)"},
      {"-h, --help", "this text"}},
    exits = {{0, "complete"}, {1, "incomplete, or points in two parts"},
      {2, "usage, or parts that do not belong together"}, {7, "OUT could not be written (nothing is left half-written)"}}},
  {name = "compare", module = "gpuexp.commands.compare",
    summary = "a verdict per point between runs: same, slower, faster",
    usage = "gpuexp compare [options] BASE.csv [MORE_BASE.csv...] NEW.csv",
    about = "Joins the rows of NEW.csv and the baseline run(s) on the sweep's axes (from the .meta.json written\n" ..
      "beside each CSV) and gives every point a verdict per metric: same, slower, faster, new (no\n" ..
      "baseline row), missing (no new row) or error (the new row's status is not ok).\n\n" ..
      "The rule: a point is slower when it is worse than the baseline's median by more than its threshold.\n" ..
      "  3 or more baselines: threshold = max(--threshold, 3 x the baselines' spread: the largest\n" ..
      "                       deviation of a baseline's value from their median, the single largest\n" ..
      "                       ignored when there are 4 or more)\n" ..
      "  1 or 2 baselines:    threshold = max(--threshold, 2 x the larger within-run noise (noise_pct))\n" ..
      "  and never below 3 standard errors of the new median (noise_pct and samples columns).\n" ..
      "--rule nvbench applies NVBench's rule instead (nvbench_compare.py: same when the change is within\n" ..
      "the smaller of the two runs' noise, against the last baseline), for comparison. --rule mannwhitney\n" ..
      "decides as asv does: slower when the Mann-Whitney U test on the samples (samples_ms, kept beside\n" ..
      "every measured row) gives p < 0.05 against the last baseline run and the change is past\n" ..
      "--threshold. Whatever the rule, when both runs have samples the basis gives the p-value and a\n" ..
      "bootstrap 95% interval of the ratio of the medians.",
    options = {
      {"--metric COL[:lower|:higher]", "column to judge (repeatable). Which way is better is known for\n" ..
        "*_ms/*_us/*_s/time (lower) and gbps/gflops/*_per_s (higher); say it\n" ..
        "for other columns", type = "metric", repeatable = true,
        default_text = "the time column, median_ms, else the first *_ms column"},
      {"--threshold PCT", "the smallest change ever called a regression", type = "number", min = 0,
        what = "a percentage >= 0", default = 2},
      {"--rule gpuexp|nvbench|mannwhitney", "how a change is judged (above)", type = "choice",
        choices = {"gpuexp", "nvbench", "mannwhitney"}, default = "gpuexp"},
      {"--markdown", "Markdown instead of an aligned table", field = "format", value = "markdown"},
      {"--json", "JSON", field = "format", value = "json"},
      {"--junit", "JUnit XML (a test case per point and metric)", field = "format", value = "junit"},
      {"-o, --output FILE", "write the output there instead of stdout", type = "path"},
      {"--axes A,B", "the axis columns, for CSVs with no .meta.json", type = "list",
        what = "at least one column name (A,B)"},
      {"--allow-different-gpu", "compare runs from different GPU models, drivers or clocks, or offline plans\n" ..
        "for different architectures (warns)"},
      {"-h, --help", "this text"},
    },
    after = "A CSV is read strictly: a BOM and CRLF are fine; an unclosed quote, a row with another number of\n" ..
      "cells than the header, a second row for one point, or a metric cell that is not a number is an\n" ..
      "error naming the file and line. A baseline value that is 0, negative or not finite is not used.",
    exits = {{0, "no regression"},
      {1, "regression found (a point slower, or a point ok in the baseline now failing; one failing in the\n" ..
        "baseline too is not)"},
      {2, "usage or unreadable input (also a NEW.csv with no rows)"},
      {3, "refused: the runs come from different GPUs, drivers or clock settings"},
      {7, "the output file could not be written"}, internal_exit}},
  {name = "history", module = "gpuexp.commands.history", summary = "the recorded runs (SQLite)",
    usage = "gpuexp history [--history PATH] COMMAND",
    options_title = "commands",
    options = {
      {"list [--experiment NAME] [--limit N]", "the recorded runs, newest first, each nightly run with its\n" ..
        "regression states (open, fixed, accepted)", subcommand = "list", options = {{"--experiment NAME", ""},
          {"--limit N", "", type = "integer", min = 1, default = 30, what = "a whole number of runs >= 1"}}},
      {"show RUN", "one run: its facts and rows (and a night's regression states)", subcommand = "show"},
      {"export RUN [-o, --output FILE.csv]", "the run's rows as CSV, as written (plus FILE.samples.csv)",
        subcommand = "export", options = {{"-o, --output FILE.csv", "", type = "path"}}},
      {"record FILE.csv... [--kind nightly]", "add runs written earlier (their .meta.json beside them)",
        subcommand = "record", options = {{"--kind nightly", "", type = "choice", choices = {"run", "nightly"},
          default = "run"}}},
      {"exclude RUN... | include RUN...", "keep a run out of nightly baselines (a known bad night), or back",
        subcommand = "exclude", also = "include"},
      {"accept RUN [--point 'A=V,B=W'] [--note TEXT]", "the level of a nightly run's points (or of this point, named by\n" ..
        "every axis; several with ';') is intended:\n" ..
        "an open regression there is closed as accepted, and that level is the baseline from\n" ..
        "then on (docs/explanation/regression-state.md)", subcommand = "accept",
        options = {{"--point 'A=V,B=W'", ""}, {"--note TEXT", ""}}},
      {"unaccept RUN [--point 'A=V,B=W']", "take an acceptance back (the regression is open again)",
        subcommand = "unaccept", options = {{"--point 'A=V,B=W'", ""}}},
      {"prune --keep N", "keep the newest N runs of each experiment, sweep, GPU and kind (nightly, run...;\n" ..
        "a night's re-measures go with their night)", subcommand = "prune",
        options = {{"--keep N", "", type = "integer", min = 1, what = "a whole number of runs >= 1"},
          {"--run", "", field = "runs"}}},
      {"prune --run RUN...", "delete these runs", subcommand = "prune"},
      {"site DIR [--limit N]", "the history as static HTML: the latest verdicts, and per series a trend chart\n" ..
        "of every point across its last N nights, regressions marked", subcommand = "site",
        options = {{"--limit N", "", type = "integer", min = 2, default = 60, what = "a whole number of nights >= 2"}}},
      {"merge OUT.db IN.db...", "join other hosts' histories into OUT.db by the runs' identities: merging one\n" ..
        "again adds nothing; baselines stay per GPU model and driver", subcommand = "merge"},
      {"--history PATH", "the history file", type = "path"},
      {"-h, --help", "this text"},
    },
    arguments = "script", -- the subcommand, with its words and options
    after = "The history file: --history PATH, else $GPUEXP_HISTORY, else $XDG_DATA_HOME/gpuexp/history.sqlite\n" ..
      "(~/.local/share/gpuexp/history.sqlite). `gpuexp --history PATH SCRIPT.lua` (or --record, for the\n" ..
      "default file) records a run; `gpuexp nightly` records every night.",
    exits = {{0, "ok"}, {2, "usage or unknown run"}, {6, "the history cannot be read or written"},
      {7, "an export could not be written"}, internal_exit}},
  {name = "lines", module = "gpuexp.commands.lines", summary = "a regression explained to the source line",
    usage = "gpuexp lines [options] BASE NEW",
    about = "BASE and NEW are line profiles (X.lines.json) or the folders that runs with --lines DIR filled (a\n" ..
      "base build's run and a new one's: gpuexp --lines base/ --only 'A=V' SCRIPT.lua). Each pair of\n" ..
      "profiles of one kernel and launch is aligned line by line (by the source texts, as a diff aligns\n" ..
      "them: a line that moved keeps its partner, a line edited in place is paired with its old text)\n" ..
      "and its lines are ranked by their share of the time that moved: the SASS counts they gained\n" ..
      "(X.sass.lines.json beside X.lines.json; the PC samples when there are none), with the stall reason\n" ..
      "that grew (PC samples) and the warp instructions before and after. A line within its sampling\n" ..
      "noise is marked, and so is a result whose lines do not account for the change.\n" ..
      "docs/howto/lines.md says how to read it.",
    options = {
      {"--top N", "lines shown", type = "integer", min = 1, what = "a number of lines >= 1", default = 10},
      {"--measured PCT", "the measured change of the time, to check the samples against", type = "number",
        what = "a percentage", default_text = "the profiles' own times"},
      {"--markdown", "Markdown instead of a table", field = "format", value = "markdown"},
      {"--html", "an HTML fragment", field = "format", value = "html"},
      {"--json", "JSON (the summaries the reports hold)", field = "format", value = "json"},
      {"-o, --output FILE", "write the output there instead of stdout"},
      {"-h, --help", "this text"},
    },
    exits = {{0, "compared (whatever the lines say)"}, {2, "usage, or a profile that cannot be read"},
      {7, "the output could not be written"}, internal_exit}},
  {name = "nightly", module = "gpuexp.commands.nightly", summary = "a regression suite: run, record, compare, report",
    usage = "gpuexp nightly SUITE [options]",
    about = "SUITE is a folder of experiment files (every *.lua in it, in name order) or a suite file: one\n" ..
      "experiment per line, `PATH [script arguments...]`, PATH relative to the suite file, # comments.\n" ..
      "The shipped suite runs by name from any folder: gpuexp nightly nightly.\n\n" ..
      "Each experiment runs supervised (crashes and hangs become rows) and is recorded in the history.\n" ..
      "Every point's time column (median_ms, else the first *_ms column) of every sweep is compared with\n" ..
      "its last --baseline nightly runs at its accepted level, on the same GPU model and driver (the rule\n" ..
      "of `gpuexp compare`), and with the accepted level itself (a slow creep: asv's step detection\n" ..
      "names the night it began). A point judged slower is measured again (--only, the same night) and\n" ..
      "is a regression only when the re-measure is slower too. A regression stays OPEN, and every night\n" ..
      "exits 1 and says since when, until a night is back at the accepted level (FIXED) or `gpuexp\n" ..
      "history accept` makes the new level intended (ACCEPTED). The options are recorded with the\n" ..
      "night: the site and `bisect --run` judge it alike. A point that was ok in the baseline and now\n" ..
      "fails (error, crashed, timeout) is a regression as well. Every point's counters are collected\n" ..
      "(gpuexp --counters) and a regression's report line says what changed against its baseline that\n" ..
      "accounts for the time (bank conflicts, coalescing, divergence, the tensor pipe, instructions,\n" ..
      "bytes, hit rates, occupancy, spills, the clock); changes that cannot are marked '(does not explain\n" ..
      "it)'. When nothing accounts for it, the confirm stage runs gpuexp diagnose on the point and the\n" ..
      "line carries its verdict and evidence. Each regression confirmed is then profiled line by line at\n" ..
      "the last good night's commit and at this one (gpuexp lines: the source lines that took the time,\n" ..
      "in the explanation and the reports; --lines-timeout).",
    options = {
      {"--history PATH", "the history file", type = "path", default_text = "gpuexp history --help says where"},
      {"-o, --out DIR", "the night's CSVs and report", type = "path",
        default_text = "./gpuexp-nightly/<UTC time>-<the night's tag>"},
      {"--baseline N", "baseline runs; fewer on the first nights (with fewer than 3 the rule uses the\n" ..
        "within-run noise)", type = "integer", min = 1, what = "a number of runs >= 1", default = 5},
      {"--threshold PCT", "the smallest change called a regression", field = "floor_pct", type = "number",
        min = 0, what = "a percentage >= 0", default = 2},
      {"--no-confirm", "do not re-measure suspects", field = "confirm", value = false, default = true},
      {"--no-counters", "do not collect counters (a regression is then not explained)", field = "counters",
        value = false, default = true},
      {"--lines-timeout S", "a newly confirmed regression's point is line-profiled at the last good night's\n" ..
        "commit and at this one (gpuexp lines), all of them within S seconds (0: none)", type = "seconds",
        default = M.LINES_TIMEOUT_S},
      {"--metric COL[:lower|higher]", "the column judged; median_cycles judges in cycles, which a clock that\n" ..
        "differs between nights does not move", type = "metric", default_text = "median_ms, else the first *_ms column"},
      {"--on-regression CMD", "when the night is not clean (exit 1, 5 or 6), run CMD REPORT.md through the\n" ..
        "shell, with GPUEXP_REPORT (the Markdown), GPUEXP_REPORT_HTML and\n" ..
        "GPUEXP_NIGHTLY_EXIT set; the GPU's lock is released first"},
      {"--on-regression-timeout S", "end the --on-regression command (its process group) after S seconds\n" ..
        "(0: no limit)", field = "hook_timeout", type = "seconds", default = 600},
      {"-d, --device N", "passed to each experiment", field = "devices", pass = true},
      {"--devices LIST", "passed to each experiment", pass = true},
      {"--point-timeout S", "passed to each experiment", type = "timeout", pass = true},
      {"-a, --arch ARCH", "offline plan: checks that the suite runs; measures nothing, and records and compares\n" ..
        "nothing unless --history names a file (its runs' GPU is 'offline plan for ARCH': they are the\n" ..
        "baselines of plans for ARCH only, never of a GPU's or another architecture's)", type = "arch"},
      {"-q, --quiet", "no progress lines from the experiments"},
      {"-h, --help", "this text"},
    },
    exits = {{0, "clean"}, {1, "regression found, or one still open (not fixed, not accepted)"}, {2, "usage or a bad suite"}, {3, "no GPU"},
      {5, "no regression, but the night was incomplete (an experiment failed, or points failed that failed\n" ..
        "before too)"},
      {6, "the history cannot be written, or read to judge the night"}, {75, "another nightly holds the GPU (try later)"},
      {130, "interrupted (143: SIGTERM, 129: SIGHUP); the running experiment is ended and waited for"}, internal_exit}},
  {name = "bisect", module = "gpuexp.commands.bisect", summary = "the commit that made a point slower",
    usage = "gpuexp bisect --good REV --bad REV --point 'A=V,B=W' [options] SCRIPT.lua [script arguments...]\n" ..
      "gpuexp bisect --run ID [--history PATH] [--point 'A=V,B=W'] [options]",
    about = "Measures the point (as --only runs it) at the good and the bad commit, then halves the commits\n" ..
      "between them (git rev-list --first-parent GOOD..BAD), each in a temporary git worktree, judged\n" ..
      "against the good commit's value with compare's rule. A commit that does not build or run is\n" ..
      "skipped, as git bisect skip does; a step whose change is within half the threshold of it is\n" ..
      "measured again (up to 3 times, the median decides). With --run, the night is judged as the\n" ..
      "nightly and the site judged it (the options it ran with, its regression states; printed first):\n" ..
      "the regression's first night is bad, the night before it good, its script the script, and the\n" ..
      "point, metric and threshold those of the night (--point picks one when several regressed).\n" ..
      "Kernels compiled at run time need no build; a project's own build goes in --build.",
    options = {
      {"--good REV", "a commit where the point is fast"},
      {"--bad REV", "a later commit where it is slow"},
      {"--run ID", "take the commits and the script from a regressed run of the history", type = "integer",
        what = "a run id (gpuexp history list)"},
      {"--history PATH", "the history of --run", type = "path", default_text = "gpuexp history --help says where"},
      {"--point 'A=V,B=W'", "the point (with --run: the night's regressed point, when only one)"},
      {"--metric COL[:lower|:higher]", "the column judged", default_text = "median_ms, or the night's with --run"},
      {"--build CMD", "run through the shell in each commit's worktree before measuring (its own process\n" ..
        "group, ended with bisect on Ctrl-C or SIGTERM)"},
      {"--build-timeout S", "end a build after S seconds: that commit is skipped (0: no limit)",
        type = "seconds", default = M.BUILD_TIMEOUT_S},
      {"--threshold PCT", "the smallest change called slower", type = "number", above = 0,
        what = "a percentage > 0", default_text = "2, or the night's with --run"},
      {"--lines-timeout S", "then the point is line-profiled at the last good and the first bad commit and its\n" ..
        "lines ranked (gpuexp lines), within S seconds (0: not)", type = "seconds", default = M.LINES_TIMEOUT_S},
      {"-d, --device N", "passed to each measurement", pass = true},
      {"-a, --arch ARCH", "passed to each measurement (an offline plan: for trying it out)", type = "arch",
        pass = true},
      {"--point-timeout S", "each measurement is a supervised run: a point past S seconds is ended and its\n" ..
        "commit skipped (0: no limit)", type = "seconds", default = M.POINT_TIMEOUT_S},
      {"-h, --help", "this text"},
    },
    arguments = "script",
    exits = {{0, "the first bad commit was found (printed with the path taken)"},
      {1, "the good commit gives no value for the point"}, {2, "usage"},
      {5, "no regression between good and bad (or the --run night is none), or the first bad commit is among\n" ..
        "commits that could not be measured (they are listed)"},
      {130, "interrupted (143: SIGTERM, 129: SIGHUP); the worktrees are removed"}, internal_exit}},
  {name = "tune", module = "gpuexp.commands.tune", summary = "search a space under a budget; the tie set of the best",
    usage = "gpuexp tune [options] SCRIPT.lua [script arguments...]",
    about = "Runs a script whose gpuexp.tune{...} searches a sweep's space (axes and where) for the\n" ..
      "configurations that minimise or maximise an objective column, and prints the tie set: the\n" ..
      "configurations that cannot be told apart from the best (Mann-Whitney against the best, Holm-\n" ..
      "corrected at alpha 0.05, or a bootstrap 95% interval of the ratio to the best starting below\n" ..
      "+tie-pct). Strategies: brute (every configuration), random, racing (successive halving: short\n" ..
      "measurements first, configurations shown worse by their own samples dropped early) and model (a\n" ..
      "tree-structured Parzen estimator). Every round is a sweep: supervised, resumable (--resume),\n" ..
      "recorded (--history); winners are stored by source hash, architecture, GPU, driver and CUDA, and\n" ..
      "a tune that starts from them reports tuning drift when a stored winner left the tie set. The\n" ..
      "options below win over the script's. docs/howto/tune.md has the method and the studies.",
    options = {
      {"--strategy brute|random|racing|model", "the search", type = "choice",
        choices = {"brute", "random", "racing", "model"}, default_text = "the script's, else model"},
      {"--seed N", "the search's seed", type = "integer", min = 0, default_text = "the script's, else 1"},
      {"--max-evals N", "full-measurement equivalents at most", type = "number", above = 0,
        default_text = "the script's, else every configuration for brute, a tenth of them (at least 20) for the others"},
      {"--budget-s S", "stop once the measurements took S seconds of GPU time", type = "number", above = 0},
      {"--tie-pct P", "configurations not shown more than P% worse than the best tie", type = "number",
        min = 0, default_text = "the script's, else 1"},
      {"--start stored", "start from the history's stored winners of this tune (and check their drift)",
        type = "choice", choices = {"stored"}, what = "'stored' (the history's winners)"},
      {"-d, --device N", "passed to the run", pass = true},
      {"-a, --arch ARCH", "passed to the run (an offline plan)", type = "arch", pass = true},
      {"-o, --out PATH", "passed to the run: rounds go in PATH-stem.NAME.round-NNN.csv", pass = true, type = "path"},
      {"-q, --quiet", "passed to the run", pass = true},
      {"--resume", "passed to the run: finished rounds are replayed", pass = true},
      {"--allow-changed", "passed to the run", pass = true},
      {"--history PATH", "passed to the run: rounds and winners recorded", pass = true, type = "path"},
      {"--record", "passed to the run", pass = true}, {"--point-timeout S", "passed to the run", pass = true},
      {"--shard I/N", "passed to the run (brute and random only)", pass = true},
      {"--devices LIST", "passed to the run", pass = true},
      {"--inline", "passed to the run", pass = true}, {"--no-plan", "passed to the run", pass = true},
      {"-h, --help", "this text"},
    },
    arguments = "script",
    exits = {{0, "the tie set was printed"}, {1, "the script failed, or no configuration gave a value"},
      {2, "usage"}, {3, "GPU or driver"}, {4, "a kernel did not compile"},
      {5, "finished, but configurations crashed or timed out (their rows say so; they were skipped)"},
      {6, "the history could not be written"}, {130, "interrupted (143: SIGTERM, 129: SIGHUP); --resume finishes"}, internal_exit}},
  {name = "ab", module = "gpuexp.commands.ab", summary = "two variants interleaved on one GPU: a paired verdict",
    usage = "gpuexp ab VARIANTS [options] SCRIPT.lua [script arguments...]",
    about = "Runs a script whose gpuexp.ab{variant = function(v) ... end} builds the measurement of a variant\n" ..
      "(A the base, B the change) from v: v.root (a commit's worktree), v.binary, v.source, v.options,\n" ..
      "v.defines, as the options below set them. Both are timed in ONE process on one GPU, in blocks\n" ..
      "whose order (AB or BA) is drawn from a seed, until the paired statistics could detect --mde or\n" ..
      "the budget ends: the ratio B/A per block, their geometric mean, a bootstrap 99.5% interval and\n" ..
      "the Wilcoxon signed-rank test. Slower (exit 1) when the test rejects and the interval is above\n" ..
      "1; every verdict states the change the run could have detected. The same samples judged by\n" ..
      "NVBench's rule and by compare's are shown beside it. docs/howto/ab.md has the method and the studies.",
    options = {
      {"--a-commit REV", "variant A is REV, checked out in a temporary worktree (v.root)"},
      {"--b-commit REV", "variant B likewise"},
      {"--build CMD", "run through the shell in each commit's worktree first"},
      {"--a-binary FILE", "v.binary of A (a cubin, fatbin or PTX the script loads)", type = "path"},
      {"--b-binary FILE", "v.binary of B", type = "path"},
      {"--a-source FILE", "v.source of A (a kernel source the script compiles)", type = "path"},
      {"--b-source FILE", "v.source of B", type = "path"},
      {"--a-options 'OPTS'", "v.options of A (compile options, split at spaces)"}, {"--b-options 'OPTS'", "v.options of B"},
      {"--a-define K=V", "v.defines.K of A (repeatable)", type = "define", repeatable = true},
      {"--b-define K=V", "v.defines.K of B (repeatable)", type = "define", repeatable = true},
      {"--mde PCT", "the minimum detectable effect to reach", type = "number", above = 0,
        default_text = "the script's, else 1"},
      {"--budget-s S", "stop after S seconds whatever was reached", type = "number", above = 0,
        default_text = "the script's, else 30"},
      {"--seed N", "the block order's seed", type = "integer", min = 0, max = 4294967295,
        default_text = "the script's, else 1"},
      {"--threshold PCT", "a change smaller than this is never called", type = "number", min = 0,
        default_text = "the script's, else 0"},
      {"--markdown", "Markdown (a pull-request comment)", field = "format", value = "markdown"},
      {"--json", "JSON", field = "format", value = "json"}, {"--junit", "JUnit XML", field = "format", value = "junit"},
      {"-o, --output FILE", "write the verdict there instead of stdout", type = "path"},
      {"-d, --device N", "the GPU", pass = true},
      {"-a, --arch ARCH", "an offline plan: both variants built and checked", type = "arch", pass = true},
      {"--no-plan", "with no GPU, no offline plan (as gpuexp --no-plan)", pass = true},
      {"-h, --help", "this text"},
    },
    arguments = "script",
    exits = {{0, "B is not slower (same or faster), or an offline plan"}, {1, "B is slower than A (a regression), or the script failed or gave no\n" ..
        "verdict (never called gpuexp.ab), or a commit did not build"},
      {2, "usage or unreadable input, or a timer that gave no usable samples (none, NaN, 0 ms)"},
      {3, "GPU or driver"}, {4, "a kernel did not compile"},
      {5, "undecided: the budget ended before the blocks a verdict needs (give more --budget-s)"},
      {7, "the verdict could not be written"}, {130, "interrupted (143: SIGTERM, 129: SIGHUP); the worktrees are removed"},
      internal_exit}},
  {name = "doctor", module = "gpuexp.commands.doctor", summary = "check this machine and say what to fix",
    usage = "gpuexp doctor",
    about = "Checks this machine: the NVIDIA driver, the GPUs, NVRTC (by compiling a kernel), the CUDA\n" ..
      "toolkit's headers (by compiling a kernel with CUB and cooperative groups), nvcc (optional), CUPTI\n" ..
      "and the permission to read GPU counters (by reading them on a GPU), gnuplot, and that the cubin\n" ..
      "cache and the history folders are writable. Prints each check and, for what is missing, what to\n" ..
      "do (\"--\" marks an optional piece, not counted).",
    options = {{"--version", "the versions only (gpuexp --version)"}, {"-h, --help", "this text"}},
    exits = {{0, "everything works"}, {1, "something to fix (listed)"}, {2, "usage"}}},
  {name = "help", module = "gpuexp.commands.help", summary = "this list, or a command's help",
    usage = "gpuexp help [COMMAND]\n" ..
      "gpuexp help --man | --reference | --commands | --experiments | --presets | --options COMMAND",
    options = {
      {"--man", "the man page (troff)"},
      {"--reference", "the command-line reference in Markdown (docs/reference/cli.md)"},
      {"--commands", "the command names"},
      {"--experiments", "the shipped experiments, by the names gpuexp runs them"},
      {"--presets", "the metric presets: kernel:metrics{metrics = 'NAME', ...}, gpuexp.metrics{..., metrics = 'NAME'},\n" ..
        "gpuexp metrics --check NAME"},
      {"--options COMMAND", "a command's options, one a line (for the completion)", what = "a command"},
      {"-h, --help", "this text"},
    },
    exits = {{0, "ok"}, {2, "unknown command"}}},
}

-- Every environment variable gpuexp reads (src/ and lua/; tests/lua/test_catalog.lua checks the list
-- against the sources).
M.environment = {
  {name = "GPUEXP_CACHE_DIR", text = "the cubin cache and calibrations folder (default $XDG_CACHE_HOME/gpuexp, " ..
    "else ~/.cache/gpuexp)", read_by = "compile, calibrate"},
  {name = "GPUEXP_NO_CACHE", text = "set (not 0): compile every kernel, never read or write the cubin cache",
    read_by = "compile"},
  {name = "GPUEXP_HISTORY", text = "the history file when --history is not given (default " ..
    "$XDG_DATA_HOME/gpuexp/history.sqlite, else ~/.local/share/gpuexp/history.sqlite)",
    read_by = "run --record, history, nightly, bisect"},
  {name = "GPUEXP_LOCK_DIR", text = "where gpuexp nightly keeps one lock file per GPU (default /tmp)", read_by = "nightly"},
  {name = "GPUEXP_LUA_DIR", text = "development: load lua/gpuexp/ from this folder instead of the copy built into " ..
    "the binary", read_by = "every command"},
  {name = "GPUEXP_WORKER", text = "set by gpuexp itself for a supervised run's worker processes (not for users)",
    read_by = "run"},
  {name = "GPUEXP_REPORT", text = "set for nightly --on-regression's command: the night's Markdown report",
    read_by = "(set by nightly)"},
  {name = "GPUEXP_REPORT_HTML", text = "set for nightly --on-regression's command: the night's HTML report",
    read_by = "(set by nightly)"},
  {name = "GPUEXP_NIGHTLY_EXIT", text = "set for nightly --on-regression's command: the night's exit code",
    read_by = "(set by nightly)"},
  {name = "GPUEXP_TUNE", text = "set by gpuexp tune for the script it runs: the search's options (JSON), which win " ..
    "over the script's", read_by = "(set by tune)"},
  {name = "GPUEXP_AB", text = "set by gpuexp ab for the script it runs: the request file naming the variants and " ..
    "options", read_by = "(set by ab)"},
  {name = "SLURM_ARRAY_TASK_ID", text = "with SLURM_ARRAY_TASK_COUNT, _MIN and _STEP: the --shard of a Slurm job " ..
    "array's task when --shard is not given", read_by = "run"},
  {name = "SLURM_ARRAY_TASK_COUNT", text = "the number of tasks of a Slurm job array (see SLURM_ARRAY_TASK_ID)",
    read_by = "run"},
  {name = "SLURM_ARRAY_TASK_MIN", text = "the first task id of a Slurm job array (default 0)", read_by = "run"},
  {name = "SLURM_ARRAY_TASK_STEP", text = "the step between a Slurm job array's task ids (default 1)", read_by = "run"},
  {name = "JOB_COMPLETION_INDEX", text = "with JOB_COMPLETIONS: the --shard of a Kubernetes Indexed Job's pod when " ..
    "--shard is not given", read_by = "run"},
  {name = "JOB_COMPLETIONS", text = "the Job's completions (the manifest passes it; Kubernetes does not set it)",
    read_by = "run"},
  {name = "CUDA_HOME", text = "the CUDA toolkit (headers, NVRTC, CUPTI, nvcc); else CUDA_PATH, nvcc on PATH, " ..
    "/usr/local/cuda", read_by = "compile, metrics, doctor"},
  {name = "CUDA_PATH", text = "the CUDA toolkit when CUDA_HOME is not set", read_by = "compile"},
  {name = "GX_LIBCUDA", text = "the CUDA driver library to load (default libcuda.so.1)", read_by = "every GPU use"},
  {name = "GX_LIBNVRTC", text = "the NVRTC library to load (default: found in the toolkit)", read_by = "compile"},
  {name = "GX_LIBCUPTI", text = "the CUPTI library to load, and the only one tried (default: found in the toolkit)",
    read_by = "metrics, counters, trace"},
  {name = "GX_LINES_PC_KEEP", text = "set (not 0): PC sampling is enabled once a GPU context and kept between line " ..
    "profiles (Triton's Proton does so), instead of enabled and disabled for each", read_by = "line profiles (--lines, lines)"},
  {name = "XDG_CACHE_HOME", text = "the cache's parent folder when GPUEXP_CACHE_DIR is not set", read_by = "compile"},
  {name = "XDG_DATA_HOME", text = "the history's parent folder when GPUEXP_HISTORY is not set", read_by = "history"},
  {name = "HOME", text = "the cache and history defaults under it", read_by = "compile, history"},
  {name = "TMPDIR", text = "temporary files (default /tmp)", read_by = "compile, bisect"},
  {name = "PATH", text = "nvcc, gnuplot, git and the shell commands gpuexp runs are found on it",
    read_by = "compile, plot, bisect, nightly"},
}

local by_name = {}
for _, command in ipairs(M.commands) do by_name[command.name] = command end

-- The command named so, or nil.
function M.find(name) return by_name[name] end

-- Every command's name, in the catalog's order.
function M.command_names()
  local names = {}
  for i, command in ipairs(M.commands) do names[i] = command.name end
  return names
end

-- The option names a command takes ("--out", "-o", ...), sorted.
-- The exit codes as {code, name} pairs in code order (the reference and the man page list them).
function M.exit_codes()
  local codes = {}
  for name, code in pairs(M.EXIT) do codes[#codes + 1] = {code, name} end
  table.sort(codes, function(a, b) return a[1] < b[1] end)
  return codes
end

function M.options(name)
  local command, seen, list = by_name[name], {}, {}
  for _, option in ipairs(command and command.options or {}) do
    for flag in option[1]:gmatch("%f[%w-](%-%-?[%a][%w-]*)") do
      if not seen[flag] then seen[flag] = true; list[#list + 1] = flag end
    end
  end
  table.sort(list)
  return list
end

-- The texts rendered from these entries (catalog_text.lua): a command's help text, as `gpuexp
-- COMMAND --help` prints it (nil for no such command); the list of commands with their summaries,
-- as `gpuexp help` prints it; docs/reference/cli.md (`gpuexp help --reference`).
local text = require("gpuexp.catalog_text")
function M.help(name) return text.help(M, name) end
function M.summary() return text.summary(M) end
function M.reference() return text.reference(M) end

return M
