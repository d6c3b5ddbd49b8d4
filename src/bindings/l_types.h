/* The Lua types of the bindings, one binding file each: their names, their userdata structs, and
   the functions one type's file offers the others (check, push, and what a kernel, a program or
   a device needs from another). */
#ifndef L_TYPES_H
#define L_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include "gx_binary.h"
#include "gx_device.h"
#include "gx_error.h"
#include "gx_memory.h"
#include "gx_module.h"
#include "gx_nvrtc.h"
#include "gx_stream.h"
#include "gx_timing.h"

#define GX_DEVICE_TYPE "gpuexp.Device"
#define GX_BUFFER_TYPE "gpuexp.Buffer"
#define GX_PROGRAM_TYPE "gpuexp.Program"
#define GX_KERNEL_TYPE "gpuexp.Kernel"
#define GX_LAUNCH_TYPE "gpuexp.Launch"
#define GX_SCALAR_TYPE "gpuexp.Scalar"
#define GX_BYTES_TYPE "gpuexp.Bytes"
#define GX_STREAM_TYPE "gpuexp.Stream"
#define GX_EVENT_TYPE "gpuexp.Event"
#define GX_SEQUENCE_TYPE "gpuexp.Sequence"

struct gx_profiler;
struct gx_helper_kernels;

typedef struct l_device {
    gx_device device;
    int open;
    struct gx_profiler *profiler;             /* CUPTI state, opened on the first metrics call */
    struct gx_helper_kernels *helper_kernels; /* flush and clock-probe kernels, compiled on first need */
} l_device;

/* The device's profiler, opened on first use (a rebuilt cache entry is said on stderr once);
   nonzero with *error set when it cannot be. */
int l_device_profiler(l_device *device, gx_error *error);
/* The device's helper kernels, opened on first use; raises on failure. */
struct gx_helper_kernels *l_device_helper_kernels(lua_State *L, l_device *device);
/* The Device userdata a kernel runs on (kernel -> program -> device), pushed; NULL offline. */
l_device *l_kernel_device(lua_State *L, int kernel_index);

typedef struct l_buffer {
    gx_buffer buffer;
} l_buffer;
/* A Buffer over a module global's memory (borrowed: never freed), keeping its device (uservalue 1)
   and the program that owns the module (uservalue 2) alive (l_buffer.c). */
l_buffer *l_push_global_buffer(lua_State *L, int device_index, int owner_index, int type, size_t count,
                               CUdeviceptr address);

/* A program: compiled from source (NVRTC or nvcc) or loaded from a binary (gpuexp.load). */
typedef struct l_program {
    gx_compile_result compiled; /* cubin, PTX, log; a loaded PTX file: its text and the JIT's report */
    char arch[24];              /* what it was compiled for; a binary: the device's */
    char source_name[512];
    char compiler[8];         /* "nvrtc", "nvcc", or "binary" */
    gx_image_kind image_kind; /* a binary's kind */
    char notes[2048];         /* what became of a project's nvcc options */
    unsigned char *image;     /* a binary: the file's bytes */
    char *source;             /* compiled from source: its text, for the kernels' C parameter types */
    size_t image_size;
    gx_module modules[GX_MAX_IMAGES]; /* loaded on first use of a kernel: one per fat binary */
    int module_count;
    int loaded;
    gx_image_kernels offline_kernels; /* a binary in an offline plan: its kernels, read without the driver */
} l_program;

/* The program's modules, loaded on its device on first use (none in an offline plan): their count. */
int l_program_modules(lua_State *L, int program_index);

/* gpuexp.compile{...} (l_compile.c); the Program keeps a copy of the spec as its uservalue 2. */
int l_compile(lua_State *L);
/* A lookup of name that found nothing among a program's symbols: raises a usage error naming the
   nearest kernels, an enumerator hint when one applies, and the kernels it has (l_kernel_names.c). */
int l_raise_kernel_not_found(lua_State *L, const l_program *program, const char *const *symbols, int count,
                             const char *name);
/* Pushes {name, symbol, base, template_args, params} of a kernel symbol (l_kernel_names.c). */
void l_push_kernel_details(lua_State *L, const char *symbol);

typedef struct l_kernel {
    gx_kernel kernel;           /* function NULL in offline mode; kernel.name is the name as C++ writes it */
    char symbol[GX_NAME_BYTES]; /* the mangled name the module has */
    char arch[24];              /* the program's architecture */
    gx_resources ptxas;
    int has_ptxas;
    int param_count;
    gx_param params[GX_MAX_PARAMS]; /* from the PTX, else from cuFuncGetParamInfo (sizes only) */
    int required_cluster[3];        /* __cluster_dims__ from the PTX, for an offline plan's checks */
} l_kernel;

/* Raw bytes for a parameter (a struct by value): gpuexp.bytes, gpuexp.struct. Uservalue 1 keeps
   the buffers whose addresses it holds alive. */
typedef struct l_bytes {
    size_t size, align;
    int tensor_maps;     /* TMA descriptors it holds (gpuexp.tensor_map, or a layout with tensor_map fields) */
    unsigned char *data; /* into storage, aligned to 64 bytes (a CUtensorMap's alignment) */
    unsigned char storage[];
} l_bytes;
/* A new Bytes of size bytes (copied from data) aligned to align, holding tensor_maps descriptors;
   raises on a bad size or alignment. */
l_bytes *l_push_bytes(lua_State *L, const void *data, size_t size, size_t align, int tensor_maps);

/* The launch configuration's keys, one list for every function that takes a launch (launch, bind,
   time, collect, metrics; the Lua library's measure, counters and diagnose through gpuexp.launch_keys). */
#define L_LAUNCH_KEYS "grid", "block", "shared", "args", "cluster", "cooperative", "programmatic"

typedef struct l_stream {
    gx_stream stream; /* uservalue 1: the Device */
    int borrowed;     /* a stream gpuexp made for a while (a sequence's capture): never destroyed here */
} l_stream;

typedef struct l_event {
    gx_event event; /* uservalue 1: the Device */
} l_event;

typedef struct l_scalar {
    int type; /* gx_type */
    union {
        float f32;
        double f64;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        uint8_t u8;
        int8_t i8;
        int16_t i16;
        uint16_t u16;
    } value;
} l_scalar;

/* The default device (opened on first use); raises when there is none. */
l_device *l_default_device(lua_State *L, int *index_out);
l_device *l_check_device(lua_State *L, int index);
l_kernel *l_check_kernel(lua_State *L, int index);
/* Pushes a new Kernel of the program at program_index (kept alive by it), zeroed. */
l_kernel *l_push_kernel(lua_State *L, int program_index);
/* The stream of the launch or copy option table at index (its "stream" field), or NULL when it
   has none; raises for a destroyed stream or one of another GPU than device (when given). */
const gx_stream *l_opt_stream(lua_State *L, int index, const char *what, const gx_device *device);
/* Program helpers shared by gpuexp.compile and gpuexp.load (l_program.c). */
const char *l_push_script_path(lua_State *L, const char *path, const char *what); /* pushes it, or raises */
l_program *l_push_program(lua_State *L, int device_index, const char *source_name, const char *compiler);
void l_note_source(lua_State *L, const char *name, const char *key); /* for --resume's changed-kernel check */
/* The index of t.device, else of the default device when open_default (0 in an offline plan). */
int l_device_option(lua_State *L, int table, int open_default);
void l_device_arch(lua_State *L, int device_index, char *out, size_t size); /* "sm_90": the device's or the plan's */
/* One run of the Sequence at index on its stream (l_sequence.c); a Lua error in it is kept and
   l_sequence_raise raises it again as it was (its own message and line). */
int l_sequence_run(lua_State *L, int sequence_index, gx_error *error);
int l_sequence_raise(lua_State *L, const gx_error *error);
/* A kernel with its configuration and arguments (l_kernel.c). */
typedef struct l_launch {
    l_kernel *kernel; /* kept alive by uservalue 1 */
    gx_launch_config config;
    int arg_count;
    unsigned char storage[GX_MAX_PARAMS][8]; /* scalars and pointers; bytes point into their Bytes */
    void *pointers[GX_MAX_PARAMS];
} l_launch;
/* Reads config and args from the table at `table` into launch; buffers are stored in the table at
   `keep` (when non-zero) so a bound launch keeps them alive. Raises on bad input. */
void l_read_launch(lua_State *L, int table, l_kernel *k, l_launch *launch, int keep, const char *what,
                   const char *const *allowed);
/* Enqueues the launch (nothing in an offline plan). */
int l_launch_work(void *user, gx_error *error);
int l_kernel_collect(lua_State *L);

/* Work timed by l_time_work: one run (work), the same enqueued on a stream (for graph capture),
   and its device (NULL in an offline plan: no timings then). */
typedef struct l_timed_work {
    gx_work_fn work;
    gx_enqueue_fn enqueue;
    void *user;
    l_device *device;
    int (*raise)(lua_State *L, void *user, const gx_error *error); /* NULL: l_raise */
} l_timed_work;
/* Times work with CUDA events, the options table at `options` (0: none) giving warmup (default
   5), reps (100), cold (flush the L2 before each sample, outside its events), graph = N (each
   sample one CUDA graph of N runs, divided by N), batch = N (N runs back to back between the
   events, divided by N) and clock (probe the SM clock after). Pushes the
   statistics table (l_timing.c). */
int l_time_work(lua_State *L, const l_timed_work *work, int options);
struct gx_arch_limits;
struct gx_occupancy_input;
struct gx_occupancy_result;
const struct gx_arch_limits *l_check_arch(lua_State *L, const char *arch);
int l_carveout_option(lua_State *L, int table);
void l_push_occupancy(lua_State *L, const struct gx_arch_limits *arch, const struct gx_occupancy_input *in,
                      const struct gx_occupancy_result *result);

#endif
