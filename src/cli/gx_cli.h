/* Subcommands of the command line that need no Lua. */
#ifndef GX_CLI_H
#define GX_CLI_H

#include <stddef.h>
#include <stdio.h>

enum gx_exit_code {
    GX_EXIT_OK = 0,
    GX_EXIT_SCRIPT = 1,  /* the script raised an error or a check failed */
    GX_EXIT_USAGE = 2,   /* bad command line */
    GX_EXIT_GPU = 3,     /* no driver, no GPU, or a CUDA call failed */
    GX_EXIT_COMPILE = 4, /* NVRTC rejected a kernel */
    GX_EXIT_WRITE = 7,   /* an output could not be written (a full disk, an I/O error); rows written are whole */
    GX_EXIT_INTERNAL = 70, /* a failure inside gpuexp itself (a bug in a command), never 0 or 1 */
    GX_EXIT_BUSY = 75,   /* another run holds the output (EX_TEMPFAIL: try later) */
};

/* Prints a command's help text from the command catalog (lua/gpuexp/catalog.lua). */
int gx_cli_help(const char *command, FILE *out);
/* " (did you mean '--x'?)" for an option the command does not take (from the catalog), or "". */
void gx_cli_did_you_mean(const char *command, const char *word, char *out, size_t size);

int gx_cli_info(int argc, char **argv);
int gx_cli_occupancy(int argc, char **argv);
int gx_cli_metrics(int argc, char **argv);

#endif
