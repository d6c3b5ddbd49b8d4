/* The command catalog (lua/gpuexp/catalog.lua), read in a Lua state of its own, for main.c's
   dispatch and the C commands' --help (l_catalog.c). */
#ifndef L_CATALOG_H
#define L_CATALOG_H

#include <stddef.h>
#include <stdio.h>

#include <lua.h>

enum l_command_kind { L_COMMAND_NONE, L_COMMAND_LUA, L_COMMAND_NATIVE, L_COMMAND_RUN_OPTION };
/* What name is: a Lua command (its module in detail), a C one, a run option's alias (the option
   in detail: "--diagnose"), or none. */
enum l_command_kind l_catalog_command(const char *name, char *detail, size_t size);
/* Writes the command's help text to out; 0, or -1 when there is none. */
int l_catalog_help(const char *name, FILE *out);
/* A command line parsed by the command's catalog entries (lua/gpuexp/engine/args.lua, the parser
   of every command): each option given, in order, by the field its entry sets. */
#define L_PARSED_MAX 64
struct l_parsed_option {
    char field[64];
    const char *value; /* as typed (in argv), or a flag's own text (in text); NULL for a flag */
    int on;            /* a flag: set to true (1) or false (0) */
    char text[64];
};
struct l_parsed {
    struct l_parsed_option given[L_PARSED_MAX];
    int count;
    int script_index; /* argv's index of the script (the first argument after the options), argc when none */
    char error[1024]; /* the usage error: "unknown option '--x' (did you mean '--y'?)" */
};
/* Parses argv[1 ..] as command's options: 0; -1, a usage error; -2, the catalog or its parser failed
   (a bug); the message in parsed->error. */
int l_catalog_parse(const char *command, int argc, char **argv, struct l_parsed *parsed);
/* The option last given for field, or NULL. */
const struct l_parsed_option *l_parsed_find(const struct l_parsed *parsed, const char *field);
/* gpuexp._did_you_mean(word, names): the binding of gx_did_you_mean, in the catalog's states too. */
int l_catalog_suggest(lua_State *L);
/* " (did you mean 'x'?)" naming what word was likely meant, or "": among the commands and the
   shipped experiments when command is NULL, else among that command's options. */
void l_catalog_did_you_mean(const char *command, const char *word, char *out, size_t size);

#endif
