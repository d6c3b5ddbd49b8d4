/* Per-instruction profiles of one launch, for a regression explained to the source line (issue 38):
   CUPTI's SASS metrics (how often each SASS instruction ran, and its memory traffic) and its PC
   sampling (where warps were, and why they stalled), each instruction mapped to its source file and
   line by the cubin's line table (compiled with -lineinfo / --generate-line-info). The kernel runs
   from a fresh copy of its image, loaded inside each collection, so the user's module is never
   patched and CUPTI sees the module load it tracks. */
#ifndef GX_LINES_H
#define GX_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "gx_device.h"
#include "gx_error.h"
#include "gx_module.h"

#define GX_LINES_MAX_METRICS 8
#define GX_LINES_NAME_SIZE 128

/* One SASS instruction of the profiled kernel (or of a function it calls). */
typedef struct gx_line_instruction {
    char *function;                        /* the function's symbol (malloc'ed) */
    uint64_t pc;                           /* byte offset from the function's start */
    uint64_t values[GX_LINES_MAX_METRICS]; /* the SASS metrics, in the profile's order */
    uint32_t *samples;                     /* PC samples per stall reason (reason_count), or NULL */
    char *file;                            /* its source file (malloc'ed), NULL when unmapped */
    char *directory;
    uint32_t line; /* 0 when unmapped */
} gx_line_instruction;

typedef struct gx_line_profile {
    gx_line_instruction *instructions;
    size_t count, capacity;
    int metric_count;
    char metric_names[GX_LINES_MAX_METRICS][GX_LINES_NAME_SIZE];
    int reason_count;
    char (*reason_names)[GX_LINES_NAME_SIZE]; /* CUPTI's names, e.g. smsp__pcsamp_warps_issue_stalled_barrier */
    /* the SASS metrics stage: done, or why not ("" when not asked) */
    int sass_done, sass_passes;
    double sass_seconds;
    char sass_error[1024];
    /* the PC sampling stage */
    int pc_done, launches, period, ranges;
    uint64_t total_samples, dropped_samples, non_user_samples, record_samples;
    int buffer_full;
    double pc_seconds;
    char pc_error[1024];
    char pc_notes[512];
    /* the line mapping: instructions mapped, and why none were */
    size_t mapped;
    char map_error[512];
    size_t *slots; /* an index of the instructions by (function, pc): slot_count a power of two */
    size_t slot_count;
} gx_line_profile;

/* The launch of the profiled kernel, from the fresh module: enqueues it exactly once. */
typedef int (*gx_line_launch_fn)(void *user, gx_kernel *kernel, gx_error *error);

typedef struct gx_line_options {
    const char *const *metrics; /* SASS metric names; NULL: gx_lines_default_metrics */
    int metric_count;
    int sass, pc_sampling; /* which stages run */
    int period;            /* PC sampling period: 2^period cycles (5..31); 0: 9 */
    int serialized;        /* CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED, else CONTINUOUS */
    uint64_t min_samples;  /* launch again until this many samples (0: 100000) */
    int max_launches;      /* at most this many sampled launches (0: 64) */
    double max_seconds;    /* nor sample longer than this (0: 10 s) */
} gx_line_options;

/* CUPTI's two per-instruction collectors share no process. On the H100 (driver 580.159.04,
   bench/h100/lines_try1/probe.txt) PC sampling after SASS metrics in one process gives no PC
   records (CUPTI counts the samples as non-user kernels'), and SASS metrics after PC sampling fail
   (cuptiSassMetricsFlushData: CUPTI_ERROR_INVALID_PARAMETER in the probe, cuptiSassMetricsSetConfig:
   CUPTI_ERROR_OUT_OF_MEMORY in gpuexp). The first collector a process enables owns it: it may run
   again there (PC sampling enabled a second time gave its samples), the other is refused there,
   said and never attempted, so neither breaks the other. */
enum { GX_LINES_PC = 1, GX_LINES_SASS = 2 };

/* What a request runs, by the rule above: run_pc, run_sass (never both), and why a collector asked
   for is not taken (empty when it is). */
typedef struct gx_lines_plan {
    int run_pc, run_sass;
    char why_pc[320], why_sass[320];
} gx_lines_plan;

/* The plan for a request (want_pc, want_sass) in a process that `owner` owns (0: neither yet):
   PC sampling first when both are asked in a fresh process. Pure: no CUPTI, no state. */
void gx_lines_plan_for(int owner, int want_pc, int want_sass, gx_lines_plan *plan);

/* The collector that owns this process (0: neither yet). */
int gx_lines_owner(void);

/* The SASS metrics a line profile collects unless told otherwise, and how many. */
extern const char *const gx_lines_default_metrics[];
extern const int gx_lines_default_metric_count;

/* Collects the asked stages for `symbol` of `image` (a cubin, fat binary or PTX, reloaded for each
   stage) on device, as gx_lines_plan_for allows in this process. A stage the rule or CUPTI refuses
   (a virtual GPU, no PC sampling, another profiler) leaves its *_error set and the other stage goes
   on; an error is returned only for what stops both (a launch that fails, no memory, CUPTI not
   loadable). The profile is freed by gx_line_profile_free, whatever is returned. */
int gx_line_profile_collect(gx_line_profile *profile, const gx_device *device, const void *image, const char *symbol,
                            const gx_line_options *options, gx_line_launch_fn launch, void *user, gx_error *error);
void gx_line_profile_free(gx_line_profile *profile);

/* Maps every instruction of the profile to its source line with the cubin's line table (no GPU
   needed). Returns how many were mapped; 0 with map_error set when the cubin has no line table. */
size_t gx_line_profile_map(gx_line_profile *profile, const void *cubin, size_t cubin_size);

/* The static line table of `symbol` in a cubin, without a GPU: one instruction per 16 bytes of its
   code (.text.<symbol>), each mapped to its line. GX_ERR_USAGE when the cubin has no such function. */
int gx_line_profile_static(gx_line_profile *profile, const void *cubin, size_t cubin_size, const char *symbol,
                           gx_error *error);

/* The instruction for (function, pc), added when missing; NULL when out of memory. */
gx_line_instruction *gx_line_profile_instruction(gx_line_profile *profile, const char *function, uint64_t pc);

/* The size of `symbol`'s code in a cubin (its .text.<symbol> section), or 0. Pure ELF parsing. */
size_t gx_cubin_function_bytes(const void *cubin, size_t cubin_size, const char *symbol);

/* Whether a cubin carries a line table (a .debug_line section: -lineinfo, --generate-line-info or
   -G). Pure ELF parsing. */
int gx_cubin_has_line_table(const void *cubin, size_t cubin_size);

#endif
