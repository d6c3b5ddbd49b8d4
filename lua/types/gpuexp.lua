---@meta gpuexp
-- LuaLS definitions of the gpuexp scripting API, for editors (Neovim, VS Code with sumneko's Lua
-- extension). Installed as share/gpuexp/luals/gpuexp.lua; point "workspace.library" at that folder.
-- tests/lua/test_luals.lua fails when a function of the binary is missing here, or the other way round.

---@alias gpuexp.ElementType "f32"|"f64"|"i32"|"u32"|"i64"|"u64"|"u8"|"i8"|"i16"|"u16"|"f16"|"bf16"|"fp8_e4m3"|"fp8_e5m2"
---@alias gpuexp.Arg gpuexp.Buffer|gpuexp.Scalar
---@alias gpuexp.Dim integer|integer[]

---@class gpuexp.Error
---@field message string  the error text, the script's file:line first
---@field kind "usage"|"driver"|"compile"|"system"|"profiler"|"write"|"busy"|"option"

---@class gpuexp.LaunchSpec
---@field stream? gpuexp.Stream  the stream to enqueue on (kernel:launch, kernel:bind)
---@field grid gpuexp.Dim  blocks (a number or {x, y, z})
---@field block gpuexp.Dim  threads per block
---@field shared? integer  dynamic shared memory in bytes
---@field args? gpuexp.Arg[]  device buffers and typed scalars, checked against the kernel's signature
---@field cluster? gpuexp.Dim  a thread block cluster (9.0+): divides the grid; up to 8 blocks, 16 where the GPU allows the non-portable size
---@field cooperative? boolean  a cooperative launch (grid-wide sync): the grid must be resident at once
---@field programmatic? boolean  programmatic dependent launch (9.0+): may start while the previous kernel of its stream runs

---@class gpuexp.Timing
---@field median_ms number
---@field min_ms number
---@field max_ms number
---@field mean_ms number
---@field stddev_ms number
---@field noise_pct number  stddev / mean x 100
---@field p10_ms number
---@field p90_ms number
---@field samples integer
---@field samples_ms number[]
---@field timer string

---@class gpuexp.Measurement: gpuexp.Timing
---@field mode "hot"|"cold"|"graph"|"batch"  auto: back to back ("batch" behind the blocking kernel, "graph" if batch timing fails) when per-run events read the host's enqueue
---@field per_run_ms? number  auto: what per-run events read in the probe
---@field back_to_back_ms? number  auto: what back-to-back runs read in the probe
---@field host_share_pct? number  auto: (per_run - back_to_back) / per_run x 100
---@field block_timeouts? integer  batch: samples whose blocking kernel timed out before release (re-timed unblocked)
---@field timing_note? string  says when a blocking kernel timed out
---@field stop_reason "noise"|"timeout"|"max_samples"
---@field sm_clock_mhz number
---@field clock_throttled boolean
---@field throttled_samples integer  samples dropped: their batch ran below throttle_pct of the highest clock
---@field median_cycles number  median of each sample's time x its batch's SM clock
---@field launches_per_sample integer
---@field batches integer

---@class gpuexp.Occupancy
---@field active_blocks_per_sm integer
---@field active_warps_per_sm integer
---@field max_warps_per_sm integer
---@field occupancy_pct number
---@field limiter string  warps, blocks, registers, shared or barriers
---@field source "driver"|"model"
---@field cluster_size? integer  with a cluster (asked, or the kernel's __cluster_dims__): blocks per cluster
---@field active_clusters? integer  on a GPU: clusters resident at once on the whole GPU (cuOccupancyMaxActiveClusters)
---@field active_clusters_bound? integer  in a plan: the model's blocks per SM on the architecture's largest GPU, in whole clusters
---@field cluster_note? string  in a plan: why active_clusters needs the GPU

---@class gpuexp.MetricsInfo
---@field passes integer  replay passes
---@field chip string
---@field units table<string, string>
---@field names string[]
---@field seconds number
---@field timing table<string, number>  where the collect's time went

---@class gpuexp.Lesson
local Lesson = {}
---Records what did not hold when condition is false (text says what went wrong).
---@param condition boolean
---@param text string
function Lesson:expect(condition, text) end
---Records a statement of the lesson with its numbers, printed either way (yes or NO).
---@param condition boolean
---@param statement string
function Lesson:claim(condition, statement) end
---Prints "held on this GPU: <held>" or "did NOT hold", then the claims and failed expectations; returns whether all held.
---@param held string
---@return boolean
function Lesson:report(held) end

---@class gpuexp.Scalar  a value with its C type, from gpuexp.f32(x) and friends
---@field type gpuexp.ElementType
---@field value number  the value as stored (f16, bf16 and fp8 rounded to nearest even)
---@field bits integer  the bit pattern

---@class gpuexp.Device
---@field name string
---@field uuid string
---@field arch string  "sm_90"
---@field ordinal integer
---@field sm_count integer
---@field l2_bytes integer
---@field memory_bytes integer
---@field peak_dram_gbps number
---@field peak_fp32_gflops number
---@field facts table<string, any>  every fact (the README lists them)
local Device = {}
---Allocates device memory.
---@param type gpuexp.ElementType
---@param count integer
---@return gpuexp.Buffer
function Device:alloc(type, count) end
---Any CU_DEVICE_ATTRIBUTE_*, lower case without the prefix.
---@param name string
---@return integer
function Device:attribute(name) end
---Every device attribute by name.
---@return table<string, integer>
function Device:attributes() end
---Free and total device memory in bytes.
---@return integer free, integer total
function Device:memory_info() end
---Waits for everything queued on the device.
function Device:synchronize() end
---The SM clock in MHz, measured now by a probe kernel (in an offline plan: nil and why).
---@return number|nil mhz
---@return string? why
function Device:sm_clock() end
---What NVML reads of this GPU now: energy_j (total since the driver loaded), power_w,
---temperature_c, throttle_reasons (names), throttle_mask, sm_clock_mhz, applications_clock_mhz,
---power_limit_w; nil and why without NVML or in an offline plan. gpuexp never changes a setting.
---@return {energy_j?: number, power_w?: number, temperature_c?: integer, throttle_reasons?: string, throttle_mask?: integer, sm_clock_mhz?: integer, applications_clock_mhz?: integer, power_limit_w?: number}|nil
---@return string? why
function Device:telemetry() end
---Enqueues an L2 eviction (a read of twice the L2).
function Device:flush_l2() end

---@class gpuexp.Buffer
---@field count integer
---@field bytes integer
---@field type gpuexp.ElementType
---@field kind "device"|"pinned"|"pageable"
---@field global? boolean  a module's __constant__ or __device__ variable (program:global): never freed by gpuexp
---@field name? string  a global's name
---@operator len: integer
local Buffer = {}
---Element i (1-based).
---@param i integer
---@return number
function Buffer:get(i) end
---Sets element i (1-based); the value is range-checked for the type.
---@param i integer
---@param value number
function Buffer:set(i, value) end
---Fills every element with one value.
---@param value number
---@return gpuexp.Buffer self
function Buffer:fill(value) end
---Uniform values; element i depends only on (seed, i).
---@param spec {seed?: integer, min?: number, max?: number}
---@return gpuexp.Buffer self
function Buffer:random(spec) end
---Copies from a buffer of the same type (any kind) or a Lua table.
---@param source gpuexp.Buffer|number[]
---@param options? {offset?: integer, source_offset?: integer, count?: integer}
---@return gpuexp.Buffer self
function Buffer:copy_from(source, options) end
---count elements from first (1-based) as a Lua table.
---@param first? integer
---@param count? integer
---@return number[]
function Buffer:to_table(first, count) end
---ok when every |self - expected| <= atol + rtol |expected|, or (ulps given) self is within ulps units in
---the last place of its type from expected. Defaults: f32/f64 rtol 1e-5, atol 1e-8; f16, bf16, fp8 rtol =
---the type's epsilon, ulps = 1. info: mismatches, first_mismatch, first_value, first_expected, first_ulps,
---max_abs_error, max_rel_error, max_ulp_error, epsilon, type.
---@param expected gpuexp.Buffer
---@param tolerance? {rtol?: number, atol?: number, ulps?: number}
---@return boolean ok, table info
function Buffer:compare(expected, tolerance) end
---Times a copy into this buffer: median_ms, gbps, ...
---@param source gpuexp.Buffer
---@param options? {warmup?: integer, reps?: integer}
---@return table
function Buffer:time_copy_from(source, options) end
---Frees the memory now (the garbage collector does it otherwise).
function Buffer:free() end
---Writes a string's bytes into the buffer (structs packed by a layout).
---@param data string
---@param offset_bytes? integer
---@return gpuexp.Buffer
function Buffer:write(data, offset_bytes) end
---The buffer's bytes as a string (to the end by default).
---@param offset_bytes? integer
---@param bytes? integer
---@return string
function Buffer:read(offset_bytes, bytes) end

---@class gpuexp.Program
---@field compiler "nvrtc"|"nvcc"|"binary"
---@field kind string  "source", or a binary's kind: "cubin", "fatbin", "ptx", "host binary"
---@field notes string  what became of the nvcc options NVRTC does not take
---@field modules integer  modules loaded (a host binary has one per fat binary)
---@field log string  NVRTC's log with the ptxas -v report
---@field ptx string
---@field arch string
---@field cache_hit boolean
---@field cache_key string
---@field source_key string  the kernel's hash without the architecture
---@field compile_seconds number
---@field cubin_bytes integer
local Program = {}
---A kernel by its C++ name ("ns::k<float, 128>", with or without namespaces, template arguments or parameter list), extern "C" name, name expression or mangled name; compared in canonical form (spaces, 256/256u/256ul, true/1, const on either side, CCCL's ABI inline namespaces do not matter). A name with enumerators is lowered by the compiler where the program has its source. A miss names the nearest kernels.
---@param name string
---@return gpuexp.Kernel
function Program:kernel(name) end
---The kernels' names; with {details = true} a table per kernel: name, symbol, base, template_args, params.
---@param options? {details?: boolean}
---@return string[]|{name: string, symbol: string, base: string, template_args: string[], params: string[]}[]
function Program:kernels(options) end
---Registers, shared memory, stack, spills and barriers from the ptxas report (no GPU needed).
---@param name string
---@return table
function Program:resources(name) end
---A __constant__ or __device__ variable as a Buffer with a name (cuModuleGetGlobal), by its C++ name or symbol; type defaults to PTX's (u8 for byte arrays). In a plan: a planned buffer of the binary's size. A miss says which it has (did-you-mean).
---@param name string
---@param type? gpuexp.ElementType
---@return gpuexp.Buffer
function Program:global(name, type) end
---The module's globals, read from its binary or PTX (no GPU needed).
---@return {name: string, symbol: string, bytes: integer, space: "constant"|"device"}[]
function Program:globals() end

---@class gpuexp.Kernel
---@field name string  as C++ writes it
---@field symbol string  the mangled name
local Kernel = {}
---Enqueues one launch.
---@param spec gpuexp.LaunchSpec
function Kernel:launch(spec) end
---Event-timed samples: warmup (5), reps (100), cold, graph (runs per captured graph), batch (runs back to back between two events, held behind the blocking kernel unless hold = false), clock.
---@param spec gpuexp.LaunchSpec|{warmup?: integer, reps?: integer, cold?: boolean, graph?: integer, batch?: integer, hold?: boolean, clock?: boolean}
---@return gpuexp.Timing
function Kernel:time(spec) end
---The measurement policy: samples until the noise target, a minimum time, or a timeout.
---@param spec gpuexp.LaunchSpec|{mode?: string, warmup?: integer, min_samples?: integer, min_time_ms?: number, max_noise_pct?: number, timeout_s?: number, graph_launches?: integer, host_share_pct?: number, throttle_pct?: number, recovery_ms?: number}
---@return gpuexp.Measurement
function Kernel:measure(spec) end
---A launch with its configuration and arguments bound: the fast path for launch loops.
---@param spec gpuexp.LaunchSpec
---@return gpuexp.Launch
function Kernel:bind(spec) end
---Theoretical occupancy: the driver's on a GPU, the model's offline, with the limiter.
---@param spec {block: integer, shared?: integer, carveout?: string|integer}
---@return gpuexp.Occupancy
function Kernel:occupancy(spec) end
---The loaded function's and ptxas's resources.
---@return table
function Kernel:resources() end
---Hardware counters of one launch (CUPTI), with presets and derived values; nil and why when counters cannot be read.
---@param spec gpuexp.LaunchSpec|{metrics: string|string[], restore?: boolean, flush_l2?: boolean}
---@return table<string, number|string>|nil values, gpuexp.MetricsInfo|string info
function Kernel:metrics(spec) end
---The raw counters under Kernel:metrics (no presets, no derived values).
---@param spec gpuexp.LaunchSpec|{metrics: string[], restore?: boolean, flush_l2?: boolean}
---@return table<string, number>|nil values, table|string info
function Kernel:collect(spec) end
---A line profile of one launch (docs/howto/lines.md): PC samples by stall reason of each SASS
---instruction, mapped to its source line (compile with -lineinfo), with the sources' text; nil and why
---in an offline plan or without CUPTI. sass = true, pc_sampling = false: each instruction's executions
---and memory traffic (CUPTI's SASS metrics) instead, in a process that has not sampled PCs (the two
---never share a process: the other is refused there). A stage refused (a virtual GPU, the process
---rule) says why in profile.sass.error or profile.pc.error.
---@param spec gpuexp.LaunchSpec|{label?: string, time?: boolean, sass?: boolean, pc_sampling?: boolean, period?: integer, serialized?: boolean, min_samples?: integer, max_launches?: integer, max_seconds?: number, metrics?: string[]}
---@return gpuexp.LineProfile|nil profile, string? why
function Kernel:line_profile(spec) end

---@class gpuexp.LineProfile
---@field kernel string
---@field label? string
---@field time_ms? number  the launch's median time
---@field metrics string[]  the SASS metrics (smsp__sass_ left off): counts[i] of an instruction is metrics[i]
---@field reasons string[]  the stall reasons PC sampling knows (smsp__pcsamp_warps_issue_stalled_ left off)
---@field sass {done: boolean, passes?: integer, seconds?: number, error?: string}
---@field pc {done: boolean, launches?: integer, period?: integer, samples?: integer, seconds?: number, error?: string}
---@field line_info boolean  whether the instructions were mapped to lines
---@field line_table? boolean  whether the cubin has a line table (false: compiled without -lineinfo)
---@field sources table<string, string>  the text of the files the lines are in
---@field instructions {function: string, pc: integer, file?: string, line?: integer, counts?: integer[], samples?: table<string, integer>}[]

---@class gpuexp.LineDiff
---@field basis string  "samples", "counts" (no PC samples: SASS counts weighed), "static" or "none"
---@field total_pct? number  the kernel's sampled (or estimated) change
---@field accounted boolean  whether the top lines account for the change
---@field accounting string  the sentence that says so
---@field notes string[]
---@field rows table[]  every line, the time gained first: kind, delta_pct, share, reason, base and new lines
---@field summary table  what reports hold: the top lines' cells
---@field text string  the table as gpuexp lines prints it

---@class gpuexp.Launch
local Launch = {}
---Enqueues the bound launch.
function Launch:launch() end
---Times the bound launch.
---@param options? {warmup?: integer, reps?: integer, cold?: boolean, graph?: integer, batch?: integer, hold?: boolean, clock?: boolean}
---@return gpuexp.Timing
function Launch:time(options) end

---@class gpuexp.Stream
---@field priority integer
---@field device gpuexp.Device
local Stream = {}
---Waits until everything enqueued on the stream has run.
function Stream:synchronize() end
---True when everything enqueued has run.
---@return boolean
function Stream:query() end
---Work enqueued later on the stream waits for the event.
---@param event gpuexp.Event
function Stream:wait(event) end
---Destroys the stream now (queued work still runs).
function Stream:destroy() end

---@class gpuexp.Event
---@field timing boolean
local Event = {}
---Records the event on a stream (default: where work without a stream goes).
---@param stream? gpuexp.Stream
function Event:record(stream) end
---Waits until the event has happened.
function Event:synchronize() end
---True when the event has happened.
---@return boolean
function Event:query() end
---Milliseconds between this event and a later one.
---@param finish gpuexp.Event
---@return number
function Event:elapsed_ms(finish) end
---Destroys the event now.
function Event:destroy() end

---@class gpuexp.Sequence
---@field name string
---@field kernels? integer  kernels one run launches (after the first run)
---@field stream gpuexp.Stream  the sequence's own stream, handed to its function
---@field device gpuexp.Device
local Sequence = {}
---Runs the function once and waits for the GPU (in an offline plan: checks its launches).
function Sequence:run() end
---Event-timed samples of whole runs: warmup (5), reps (100), cold, graph (runs per captured graph), batch (runs back to back between two events, held behind the blocking kernel unless hold = false), clock. In an offline plan: one run checks its launches, samples = 0.
---@param options? {warmup?: integer, reps?: integer, cold?: boolean, graph?: integer, batch?: integer, hold?: boolean, clock?: boolean}
---@return gpuexp.Timing
function Sequence:time(options) end
---The measurement policy over whole runs (graph mode captures a run into a CUDA graph).
---@param spec? {mode?: string, warmup?: integer, min_samples?: integer, min_time_ms?: number, max_noise_pct?: number, timeout_s?: number, graph_launches?: integer, host_share_pct?: number, throttle_pct?: number, recovery_ms?: number}
---@return gpuexp.Measurement
function Sequence:measure(spec) end
---Counters of every kernel of one run and their total (counts summed, the rest weighted by duration); info.kernels holds each kernel's values.
---@param spec {metrics: string|string[], restore?: gpuexp.Buffer[], flush_l2?: boolean}
---@return table<string, number|string>|nil values, gpuexp.MetricsInfo|string info
function Sequence:metrics(spec) end

---@class gpuexp.Bytes  raw bytes for one parameter (a struct by value)
---@field size integer
---@field align integer
---@field data string
---@field tensor_maps integer  TMA descriptors it holds (1 for gpuexp.tensor_map's)

---@class gpuexp.Layout  a C struct's layout: C's alignment rules
---@field size integer
---@field align integer
---@field offsets table<string, integer>
---@overload fun(values: table): gpuexp.Bytes

---@class gpuexp
---@field version string
---@field args string[]  the script's arguments (also in arg)
---@field script string
---@field script_dir string
---@field out? string  --out
---@field plan boolean  an offline plan: no GPU is used
---@field offline_arch? string
---@field device_ordinal integer
---@field quiet boolean
---@field data_dir? string  where the shipped experiments and kernels are
---@field executable string  this binary
---@field csv {read: fun(path: string): table[], string[]; open: fun(path: string): table}
---@field stall_reasons string[]
---@field metric_presets table<string, string[]>
---@field measure_defaults table  measurement policy defaults for the whole script
---@field measure_columns string[]
---@field launch_keys string[]  the keys of a launch table: grid, block, shared, args, cluster, cooperative, programmatic
gpuexp = {}

---The --device GPU, or GPU n.
---@param n? integer
---@return gpuexp.Device
function gpuexp.device(n) end
---Every GPU.
---@return gpuexp.Device[]
function gpuexp.devices() end
---How many GPUs the driver sees (1 in an offline plan: its device).
---@return integer
function gpuexp.device_count() end
---Compiles CUDA C++ with NVRTC, the toolkit's headers found (or with nvcc: compiler = "nvcc"; cached on disk). options may be a project's nvcc options.
---@param spec {file?: string, source?: string, name?: string, arch?: string, options?: string[], defines?: table, include?: string[], names?: string[], device?: gpuexp.Device, cache?: boolean, compiler?: "nvrtc"|"nvcc"}
---@return gpuexp.Program
function gpuexp.compile(spec) end
---Loads another compiler's binary: a cubin, a fat binary, PTX, or an object, library or executable with GPU code. In an offline plan, its kernels and parameter sizes are read from the file.
---@param spec {file: string, name?: string, device?: gpuexp.Device}
---@return gpuexp.Program
function gpuexp.load(spec) end
---The CUDA toolkit found: root, include, cccl, nvcc, found_by, cuda_version, cccl_version, missing headers and the packages with them.
---@return table
function gpuexp.toolkit() end
---A stream (priority: lower is more urgent; blocking: orders with the legacy default stream, the default). In an offline plan, a planned stream: work on it is checked, nothing runs.
---@param spec? {device?: gpuexp.Device, priority?: integer, blocking?: boolean}
---@return gpuexp.Stream
function gpuexp.stream(spec) end
---The device's stream priorities: least, greatest.
---@param device? gpuexp.Device
---@return integer least, integer greatest
function gpuexp.stream_priorities(device) end
---An event (timing = true by default). In an offline plan, a planned event: elapsed_ms is nil.
---@param spec? {device?: gpuexp.Device, timing?: boolean}
---@return gpuexp.Event
function gpuexp.event(spec) end
---A function that enqueues work (kernels, copies, other streams joined back with events), timed, measured and profiled as one unit.
---@param run fun(stream: gpuexp.Stream)
---@param spec? {device?: gpuexp.Device, name?: string}
---@return gpuexp.Sequence
function gpuexp.sequence(run, spec) end
---Raw bytes for one parameter.
---@param data string
---@param options? {align?: integer, keep?: table, tensor_maps?: integer}
---@return gpuexp.Bytes
function gpuexp.bytes(data, options) end
---A TMA descriptor (CUtensorMap, cuTensorMapEncodeTiled) over a device buffer: 128 bytes aligned to 64, for a `const __grid_constant__ CUtensorMap` parameter or a layout's "tensor_map" field. dims, box and element_strides innermost first; strides in bytes (default packed); the documented constraints and the buffer's bounds checked first; needs 9.0+ (a plan checks, encodes nothing).
---@param spec {buffer: gpuexp.Buffer, dims: integer[], box: integer[], type?: gpuexp.ElementType|"tf32"|"f32_ftz"|"tf32_ftz", strides?: integer[], element_strides?: integer[], offset?: integer, interleave?: "none"|"16B"|"32B", swizzle?: "none"|"32B"|"64B"|"128B", l2_promotion?: "none"|"64B"|"128B"|"256B", oob_fill?: "zero"|"nan"}
---@return gpuexp.Bytes
function gpuexp.tensor_map(spec) end
---An anonymous struct by value: {{"f32", 1.5}, {"i32", n}, {"ptr", buffer}, {"f32", {1, 2, 3}}}.
---@param fields table[]
---@param options? {align?: integer}
---@return gpuexp.Bytes
function gpuexp.struct(fields, options) end
---A named C struct layout: {{"alpha", "f32"}, {"v", "f32", 3}, {"inner", OtherLayout}, {"map", "tensor_map"}}; layout(values), :pack, :unpack, :upload, :download.
---@param fields table[]
---@param options? {align?: integer}
---@return gpuexp.Layout
function gpuexp.layout(fields, options) end
---Host memory (pageable, or pinned with {pinned = true}).
---@param type gpuexp.ElementType
---@param count integer
---@param options? {pinned?: boolean}
---@return gpuexp.Buffer
function gpuexp.host(type, count, options) end
---@param x number
---@return gpuexp.Scalar
function gpuexp.f32(x) end
---@param x number
---@return gpuexp.Scalar
function gpuexp.f64(x) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.i32(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.u32(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.i64(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.u64(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.i8(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.u8(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.i16(n) end
---@param n integer
---@return gpuexp.Scalar
function gpuexp.u16(n) end
---A __half: x rounded to nearest even (overflow to infinity), as __double2half.
---@param x number
---@return gpuexp.Scalar
function gpuexp.f16(x) end
---A __nv_bfloat16: x rounded to nearest even, as __double2bfloat16.
---@param x number
---@return gpuexp.Scalar
function gpuexp.bf16(x) end
---A __nv_fp8_e4m3: x rounded to nearest even, saturating to +-448 (__NV_SATFINITE).
---@param x number
---@return gpuexp.Scalar
function gpuexp.fp8_e4m3(x) end
---A __nv_fp8_e5m2: x rounded to nearest even, saturating to +-57344 (__NV_SATFINITE).
---@param x number
---@return gpuexp.Scalar
function gpuexp.fp8_e5m2(x) end
---A scalar given by its bit pattern: gpuexp.from_bits("f16", 0x3c00).value == 1.
---@param type gpuexp.ElementType
---@param bits integer
---@return gpuexp.Scalar
function gpuexp.from_bits(type, bits) end
---Runs every point of a sweep (supervised: crashes and hangs become rows) and writes its CSV.
---@param spec {name?: string, axes: table, where?: fun(p: table): boolean, setup?: fun(), run: fun(p: table): table, columns?: string[], out?: string, meta?: table, device?: gpuexp.Device|false, quiet?: boolean, timeout_s?: number, expect_failures?: boolean}
---@return table[] rows, string path, string[] columns
function gpuexp.sweep(spec) end
---Searches a sweep's space for the configurations that minimise or maximise an objective under a
---budget; returns the tie set and a regret bound (docs/howto/tune.md). nil in an offline plan.
---@param spec {name?: string, axes: table, where?: fun(p: table): boolean, setup?: fun(), run: fun(p: table): table, compile?: fun(p: table): table, compile_workers?: integer, objective?: string|{column: string, goal?: "min"|"max"}, condition?: string|fun(row: table): boolean, samples?: string, strategy?: "brute"|"random"|"racing"|"model", seed?: integer, max_evals?: number, budget_s?: number, start?: table[]|"stored", tie_pct?: number, alpha?: number, confidence?: number, eta?: number, batch?: integer, sources?: string[], options?: table, history?: string, columns?: string[], out?: string, quiet?: boolean, timeout_s?: number}
---@return {best: table, ties: table[], drift: table[], strategy: string, seed: integer, evaluations: number, measured: integer, configurations: integer, cost_s: number, wall_s: number, stopped_by?: string, rounds: integer, prefix: string, rule: string, regret: {bound: number, selection: number, exploration: number, confidence: number, dropped: integer, unmeasured: integer}, compile?: {workers: integer, jobs: integer, compile_s: number, wait_s: number, missed: integer, failed: integer, busy: number, life_s: number, first_s?: number, latency_s: number}, timing: {wall_s: number, runs: integer, gpu_s: number, run_s: number, wait_s: number, compile_s: number, load_s: number, sweep_s: number, pool_s: number, setup_s: number, search_s: number}}?
function gpuexp.tune(spec) end
---Two variants of one measurement timed in interleaved blocks until a stated minimum detectable
---effect is reached; a paired verdict (docs/howto/ab.md). nil in an offline plan.
---@param spec {name?: string, a?: any, b?: any, variant?: fun(v: table): any, variants?: {A?: table, B?: table}, mde_pct?: number, budget_s?: number, min_blocks?: integer, max_blocks?: integer, block_ms?: number, block_reps?: integer, warmup?: integer, cold?: boolean, confidence?: number, power?: number, threshold_pct?: number, seed?: integer, quiet?: boolean}
---@return {verdict: "slower"|"faster"|"same"|"undecided", basis: string, summary: table, a_median_ms: number, b_median_ms: number, gpu_s: number, nvbench: table, compare: table}?
function gpuexp.ab(spec) end
---The enumeration of a sweep's points alone.
---@param axes table
---@param where? fun(p: table): boolean
---@return table[]
function gpuexp.points(axes, where) end
---Statistics of samples: min, median, mean, stddev, noise_pct, p10, p90 (names with the suffix).
---@param samples number[]
---@param suffix? string
---@return table
function gpuexp.stats(samples, suffix) end
---Fails the run (exit 1) with the message when the condition is false; returns the condition.
---@param condition any
---@param message string
---@param ... any  format arguments
---@return any
function gpuexp.check(condition, message, ...) end
---A study's lesson checks.
---@return gpuexp.Lesson
function gpuexp.lesson() end
---Raises a gpuexp error value at the caller's line.
---@param kind "usage"|"driver"|"compile"|"system"|"write"|"busy"|"option"
---@param message string
---@param level? integer
function gpuexp.error(kind, message, level) end
---A 128-bit hash of text, as 32 hex digits.
---@param text string
---@return string
function gpuexp.hash(text) end
---Seconds (monotonic).
---@return number
function gpuexp.clock() end
---Waits this many seconds (the measurement policy's recovery after a throttled batch).
---@param seconds number
function gpuexp.sleep(seconds) end
---gpuexp, CUDA, driver, NVRTC and CUPTI versions (what is found; loaded_only: NVRTC and CUPTI only
---when this process has loaded them already, which costs nothing).
---@param loaded_only? boolean
---@return table<string, string|integer>
function gpuexp.versions(loaded_only) end
---Creates a folder and its parents.
---@param path string
function gpuexp.mkdir(path) end
---The cubin cache folder.
---@return string
function gpuexp.cache_directory() end
---This machine's name.
---@return string
function gpuexp.hostname() end
---A path as the script would find it (its folder, then the parent).
---@param path string
---@return string
function gpuexp.resolve(path) end
---Prints rows as aligned columns.
---@param rows table[]
---@param columns string[]
function gpuexp.print_table(rows, columns) end
---The metadata table of this run (with a plan's device: offline_arch, no GPU facts).
---@param device? gpuexp.Device
---@return table
function gpuexp.metadata(device) end
---Theoretical occupancy from the model, for any architecture.
---@param spec {arch: string, block: integer, registers?: integer, shared?: integer, barriers?: integer, carveout?: string|integer}
---@return table
function gpuexp.occupancy(spec) end
---An architecture's limits, or the list of names.
---@param arch? string
---@return table
function gpuexp.arch_limits(arch) end
---A metric's type, unit and description (no GPU needed with a chip name).
---@param name string
---@param chip? string
---@return table
function gpuexp.metric_info(name, chip) end
---Replay passes a list of metrics needs.
---@param names string[]
---@param chip? string
---@return integer
function gpuexp.metric_passes(names, chip) end
---Every base metric of a chip.
---@param chip? string
---@return {name: string, type: string}[]
function gpuexp.metric_names(chip) end
---The chips CUPTI knows.
---@return string[]
function gpuexp.metric_chips() end
---Presets and names to metric names, dropping what the chip lacks.
---@param list string|string[]
---@param chip? string
---@return string[]
function gpuexp.expand_metrics(list, chip) end
---Hardware counters of many launches in one replay (each still an isolated launch).
---@param spec {[integer]: gpuexp.LaunchSpec|{kernel: gpuexp.Kernel}, metrics: string|string[], restore?: boolean, flush_l2?: boolean, batch?: integer, max_snapshot_bytes?: integer}
---@return table[]|nil values, gpuexp.MetricsInfo|string info
function gpuexp.metrics(spec) end
---A verdict for one launch from its counters (memory-bound, compute-bound, latency-bound, contended
---atomics, bank conflicts, register spills, local memory, uncoalesced loads or stores, too few blocks,
---a tail wave, occupancy limited by registers, shared memory or the block size, FP64 arithmetic,
---barrier stalls, branch divergence) with its evidence, never from counts under a stated floor:
---findings.verdict, findings.evidence (strings), findings.text, findings.price (the speedup if fixed:
---{speedup, low, high, fraction, model, bound}), findings.values (every value collected) and the
---numbers (SoL %, stalls, occupancy, waves).
---@param kernel gpuexp.Kernel
---@param spec gpuexp.LaunchSpec
---@return table|nil findings, string? why
function gpuexp.diagnose(kernel, spec) end
---A kernel's static line table, with no GPU: its SASS instructions mapped to source lines from the
---cubin (a profile with static = true and no counts); nil and why without a cubin.
---@param kernel gpuexp.Kernel
---@param label? string
---@return gpuexp.LineProfile|nil profile, string? why
function gpuexp.line_table(kernel, label) end
---Two line profiles of a kernel aligned line by line and ranked by the time each line gained.
---@param base gpuexp.LineProfile
---@param new gpuexp.LineProfile
---@param options? {measured_pct?: number, top?: integer}
---@return gpuexp.LineDiff
function gpuexp.line_diff(base, new, options) end
---A line profile file (X.lines.json), checked; nil and why.
---@param path string
---@return gpuexp.LineProfile|nil profile, string? why
function gpuexp.read_line_profile(path) end
---Measures this GPU's ceilings (cached per GPU and driver): dram_copy_gbps, l2_gbps, shared_gbps,
---fp32_gflops, fp64_gflops, tensor_{fp16,bf16,tf32,int8,fp8}_gflops (where the GPU has them),
---h2d_pinned_gbps, d2h_pinned_gbps.
---In an offline plan: nil and why (nothing is measured).
---@param options? {force?: boolean, device?: gpuexp.Device}
---@return table|nil ceilings
---@return string? why
function gpuexp.calibrate(options) end
---The cached ceilings, or nil until calibrated (and in an offline plan).
---@param device? gpuexp.Device
---@return table|nil
function gpuexp.ceilings(device) end
---A line plot of two columns through gnuplot.
---@param spec {csv?: string, rows?: table[], x: string, y: string, by?: string, out: string, logx?: boolean, logy?: boolean, title?: string}
---@return string out
function gpuexp.plot(spec) end
---A log-log roofline.
---@param spec {csv?: string, rows?: table[], flops: string, bytes: string, time_ms: string, by?: string, out: string, peak_gflops: number, peak_gbps: number}
---@return string out
function gpuexp.roofline_plot(spec) end
---Calls a plot function; nil and why instead of an error (no gnuplot).
---@param plot function
---@param spec table
---@return string|nil out, string? why
function gpuexp.try_plot(plot, spec) end
