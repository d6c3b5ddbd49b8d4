/* The commands written in C (info, occupancy, metrics): each is called by its Lua module
   (lua/gpuexp/commands/info.lua, ...) with its command line already parsed from the catalog into
   typed fields, the table at index 1. A failure is raised as a gpuexp error value (its kind gives
   the exit code, lua/gpuexp/engine/exits.lua), said by the command runner as every command's is. */
#ifndef GX_CLI_H
#define GX_CLI_H

#include <lua.h>

#include "gx_error.h"

/* gpuexp._cli.info{device =}: every GPU's facts (or one's) on stdout. */
int gx_cli_info(lua_State *L);
/* gpuexp._cli.occupancy{arch =, block =, registers =, shared =, barriers =, carveout =, limits =}:
   the occupancy calculator as CSV on stdout. */
int gx_cli_occupancy(lua_State *L);
/* gpuexp._cli.metrics{list =, check =, chips =, chip =, device =, names = {{name =, preset =}...}}
   -> true, or false when a metric checked is not valid (each said on stderr). */
int gx_cli_metrics(lua_State *L);

/* Raises error as a gpuexp error value, with kind instead of its own unless that is GX_ERR_USAGE
   (a command's "no GPU" or "CUPTI missing" is its exit 3, whatever the core called it). */
int gx_cli_raise(lua_State *L, const gx_error *error, enum gx_error_kind kind);

/* gpuexp._cli: the three commands, in the table on top of the stack. */
void gx_cli_open(lua_State *L);

#endif
