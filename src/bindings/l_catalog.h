/* The command catalog (lua/gpuexp/catalog.lua), read in a Lua state of its own, for main.c's
   dispatch and the C commands' --help (l_catalog.c). */
#ifndef L_CATALOG_H
#define L_CATALOG_H

#include <stddef.h>
#include <stdio.h>

enum l_command_kind { L_COMMAND_NONE, L_COMMAND_LUA, L_COMMAND_NATIVE, L_COMMAND_RUN_OPTION };
/* What name is: a Lua command (its module in detail), a C one, a run option's alias (the option
   in detail: "--diagnose"), or none. */
enum l_command_kind l_catalog_command(const char *name, char *detail, size_t size);
/* Writes the command's help text to out; 0, or -1 when there is none. */
int l_catalog_help(const char *name, FILE *out);
/* A command's option read generically (catalog.option_field): -1 when the catalog gives it no
   field, else 1 when it takes a value and 0 when it is a flag, with the field in field. */
int l_catalog_option(const char *command, const char *flag, char *field, size_t size);
/* " (did you mean 'x'?)" naming what word was likely meant, or "": among the commands and the
   shipped experiments when command is NULL, else among that command's options. */
void l_catalog_did_you_mean(const char *command, const char *word, char *out, size_t size);

#endif
