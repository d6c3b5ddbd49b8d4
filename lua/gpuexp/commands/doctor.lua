-- gpuexp doctor: checks what gpuexp needs on this machine and says what to fix for each missing
-- piece; gpuexp --version: the versions of gpuexp and of the CUDA pieces it found.
local meta = require("gpuexp.store.meta")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

function M.version_text()
  local v = gpuexp.versions()
  local toolkit = gpuexp.toolkit()
  local driver = meta.driver_version()
  return table.concat({
    "gpuexp " .. gpuexp.version,
    string.format("  %s and SQLite %s, linked in; built with CUDA %s", v.lua, v.sqlite, v.built_with_cuda),
    "  CUDA driver: " .. (v.driver_cuda and (v.driver_cuda .. (driver and (" (kernel module " .. driver .. ")") or ""))
      or "not found (libcuda.so.1; GX_LIBCUDA names another)"),
    "  NVRTC: " .. (v.nvrtc or "not found (libnvrtc.so.13; GX_LIBNVRTC names another)"),
    "  CUPTI: " .. (v.cupti_api and ("API version " .. v.cupti_api) or "not found (libcupti.so.13; GX_LIBCUPTI names another)"),
    "  CUDA toolkit headers: " .. (toolkit.include and string.format("%s (CUDA %s, CCCL %s)", toolkit.root,
      tostring(toolkit.cuda_version), tostring(toolkit.cccl_version)) or "not found (CUDA_HOME names a toolkit)"),
  }, "\n")
end

local function writable(dir)
  local ok = pcall(gpuexp.mkdir, dir)
  if not ok then return false end
  local probe = dir .. "/.gpuexp-doctor-" .. tostring(os.time())
  local file = io.open(probe, "w")
  if not file then return false end
  local written = file:write("ok")
  file:close()
  os.remove(probe)
  return written ~= nil
end

function M.checks()
  local results = {}
  -- optional: a missing piece that only some scripts need, shown but not counted as a problem
  local function add(ok, what, detail, fix, optional)
    results[#results + 1] = {ok = ok, what = what, detail = detail, fix = fix, optional = optional}
  end
  local v = gpuexp.versions()
  add(gpuexp.data_dir ~= nil, "shipped experiments", gpuexp.data_dir and (gpuexp.data_dir .. "/experiments") or "not found",
    "reinstall gpuexp (cmake --install, or the .deb): they live in PREFIX/share/gpuexp beside bin/gpuexp")
  local driver = meta.driver_version()
  add(v.driver_cuda ~= nil, "NVIDIA driver", v.driver_cuda and ("CUDA " .. v.driver_cuda .. (driver and
    (", kernel module " .. driver) or "")) or "libcuda.so.1 not found",
    "install the NVIDIA driver (nvidia-smi must work); in a container, start it with the GPUs (--gpus all)")
  local ok_count, count = pcall(gpuexp.device_count)
  local gpus = {}
  if ok_count and count > 0 then
    for i = 0, count - 1 do
      local ok_device, device = pcall(gpuexp.device, i)
      gpus[#gpus + 1] = ok_device and string.format("%d: %s (%s)", i, device.name, device.arch) or
        string.format("%d: %s", i, type(device) == "table" and device.message or tostring(device))
    end
  end
  add(ok_count and count > 0, "GPUs", #gpus > 0 and table.concat(gpus, "; ") or
    (ok_count and "the driver reports 0 devices" or (type(count) == "table" and count.message or tostring(count))),
    "check nvidia-smi and CUDA_VISIBLE_DEVICES; without a GPU, gpuexp --arch sm_90 SCRIPT shows the offline plan")
  local compiled, program = pcall(gpuexp.compile, {source = 'extern "C" __global__ void doctor(float *x) { x[0] = 1; }',
    arch = "sm_80", cache = false})
  add(compiled, "NVRTC", compiled and ("NVRTC " .. tostring(v.nvrtc) .. ", compiled a kernel for sm_80") or
    (type(program) == "table" and program.message or tostring(program)),
    "install CUDA 13's NVRTC (apt: cuda-nvrtc-13-0), or set GX_LIBNVRTC to libnvrtc.so.13")
  -- the toolkit's headers (CUB, cooperative groups, libcu++, fp16/bf16/fp8, mma.h) that kernels include
  local toolkit = gpuexp.toolkit()
  local headers_ok, headers_why = false, nil
  if toolkit.include and toolkit.missing == "" and compiled then
    headers_ok, headers_why = pcall(gpuexp.compile, {arch = "sm_80", source = [[
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cuda/std/cstdint>
#include <cuda_bf16.h>
extern "C" __global__ void doctor(float *x) {
  using R = cub::BlockReduce<float, 128>;
  __shared__ R::TempStorage t;
  float s = R(t).Sum(x[threadIdx.x]);
  if (cooperative_groups::this_thread_block().thread_rank() == 0) x[0] = s; }]]})
  end
  add(headers_ok, "toolkit headers (CUB, CG, libcu++)", toolkit.include and (headers_ok and string.format(
    "%s (found by %s), CUDA %s, CCCL %s: a kernel with CUB and cooperative groups compiled", toolkit.root,
    toolkit.found_by, tostring(toolkit.cuda_version), tostring(toolkit.cccl_version)) or (toolkit.missing ~= "" and
    ("missing " .. toolkit.missing .. " in " .. toolkit.include) or tostring(headers_why and (headers_why.message or headers_why)))) or
    ("not found (looked in " .. toolkit.searched .. ")"),
    "install the toolkit's headers (apt: " .. (toolkit.packages ~= "" and toolkit.packages or "cuda-cudart-dev-13-0 cuda-cccl-13-0")
      .. "), or set CUDA_HOME to a toolkit that has them")
  add(toolkit.nvcc ~= nil, "nvcc (optional)", toolkit.nvcc or "not found", "install the toolkit's " ..
    "compiler (apt: cuda-nvcc-13-0) or set CUDA_HOME; only .cu files with host code need it", true)
  local host_ok, info = pcall(gpuexp.metric_info, "gpu__time_duration.sum", "GH100")
  add(host_ok, "CUPTI", host_ok and ("API " .. tostring(v.cupti_api) .. ", metric tables readable") or
    (type(info) == "table" and info.message or tostring(info)),
    "install CUDA 13's CUPTI (apt: cuda-cupti-13-0) with libnvperf_host.so beside libcupti.so, or set GX_LIBCUPTI")
  if ok_count and count > 0 and host_ok and compiled then
    local ok_metrics, values, why = pcall(function()
      local dev = gpuexp.device()
      local k = gpuexp.compile{source = 'extern "C" __global__ void doctor(float *x) { x[threadIdx.x] = 1; }'}:kernel("doctor")
      local buffer = dev:alloc("f32", 32)
      return k:metrics{grid = 1, block = 32, args = {buffer}, metrics = {"smsp__inst_executed.sum"}}
    end)
    add(ok_metrics and values ~= nil, "GPU counters (profiling permission)", ok_metrics and values and
      "read smsp__inst_executed.sum of a test kernel" or tostring(ok_metrics and why or values),
      "see the message: usually NVreg_RestrictProfilingToAdminUsers=0, or run with CAP_SYS_ADMIN / CAP_PERFMON")
  else
    local params = meta.read_all("/proc/driver/nvidia/params") or ""
    local admin_only = params:match("RmProfilingAdminOnly: 1") ~= nil
    -- not tried is not ok: without a GPU to read counters on, this says so and is not counted
    add(false, "GPU counters (profiling permission)", admin_only and
      "the driver lets only administrators read counters (RmProfilingAdminOnly: 1)" or
      "not tried: no GPU here", "options nvidia NVreg_RestrictProfilingToAdminUsers=0 in /etc/modprobe.d, or run as root",
      not admin_only)
  end
  local gnuplot = gpuexp._process.run({"sh", "-c", "command -v gnuplot"}, {capture = true}) == 0
  add(gnuplot == true, "gnuplot (plots)", gnuplot and "found" or "not found",
    "apt-get install gnuplot-nox (studies and reports work without it, minus the pictures)")
  local cache = gpuexp.cache_directory()
  add(writable(cache), "cubin cache", cache, "set GPUEXP_CACHE_DIR to a writable folder")
  local history_dir = require("gpuexp.store.history").default_path():match("^(.*)/[^/]*$") or "."
  add(writable(history_dir), "history folder", history_dir, "set GPUEXP_HISTORY to a file in a writable folder")
  return results
end

-- gpuexp --version, gpuexp doctor --version: the versions of gpuexp, Lua, SQLite and the CUDA pieces found.
function M.print_versions()
  print(M.version_text())
  return EXIT.OK
end

function M.run(o)
  if o.positional[1] then return nil, "unknown argument '" .. o.positional[1] .. "'" end
  if o.version then return M.print_versions() end
  print(M.version_text())
  print()
  local problems = 0
  for _, r in ipairs(M.checks()) do
    print(string.format("%-4s %-36s %s", r.ok and "ok" or (r.optional and "--" or "FIX"), r.what, r.detail))
    if not r.ok then
      if not r.optional then problems = problems + 1 end
      print("     -> " .. r.fix)
    end
  end
  print()
  print(problems == 0 and "everything gpuexp needs works here" or string.format("%d thing(s) to fix", problems))
  return problems == 0 and EXIT.OK or EXIT.FAILED
end

return M
