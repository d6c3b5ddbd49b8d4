/* A script run as C carries it out (gx_cli_run.c): the run's options as C holds them, and the
   run itself: a Lua state with the gpuexp library, the script (or a Lua command's module) under a
   traceback handler, its exit code, and the end of an in-process run. main.c parses the command
   line into a struct gx_run and calls gx_cli_run_script. */
#ifndef GX_CLI_RUN_H
#define GX_CLI_RUN_H

#include "l_catalog.h"

/* A run as C carries it out. The options themselves are the run command's catalog entries
   (lua/gpuexp/catalog.lua), parsed by lua/gpuexp/engine/args.lua (l_catalog_parse): `parsed` holds
   every option given by its field, and the few C acts on itself are read from there by field
   (read_run_fields); the rest reach the script as gpuexp.run_options. */
struct gx_run {
    struct l_parsed parsed;
    const char *arch; /* offline plan: plan_arch, or the default when no GPU is found */
    int no_plan;
    int device;
    const char *out;
    int quiet;
    const char *script;
    int script_index;
    const char *builtin; /* a subcommand written in Lua: the module whose main(args) runs */
    int worker;          /* this process is a worker of a supervised run */
    int option_count;    /* argv[1 .. option_count] are the options before the script */
    int automatic_plan;
    int inline_run;
    const char *trace; /* record a timeline (Chrome trace JSON) here */
    int diagnose;      /* diagnose every timed launch (gpuexp diagnose SCRIPT) */
    int profile;       /* gpuexp profile: each measured launch once, inside cuProfilerStart/Stop */
};

/* Whether the run's option of this catalog field was given (a flag set, or a value); its value. */
int gx_run_flag(const struct gx_run *o, const char *field);
const char *gx_run_value(const struct gx_run *o, const char *field);
/* Whether an output file given on the command line is the script itself (gpuexp -o k.lua k.lua). */
int gx_run_is_script(const struct gx_run *run, const char *path);
/* Runs the script (or run->builtin, a Lua command's module) in a new Lua state; returns the exit code. */
int gx_cli_run_script(int argc, char **argv, const struct gx_run *run);

#endif
