/* What main calls in the bindings: the openers of each type or set of functions into the gpuexp
   table (l_open_gpuexp opens them all), require()'s searcher for the Lua library compiled into the
   binary, and the stop signals' handling. What the binding files declare for each other is in
   l_types.h (the types), l_util.h (errors, options, setters), l_wire.h (the supervisor-worker
   codec) and l_catalog.h (the catalog). */
#ifndef L_GPUEXP_H
#define L_GPUEXP_H

#include <stddef.h>

#include <lua.h>

void l_open_error(lua_State *L);
void l_open_device(lua_State *L);
void l_open_buffer(lua_State *L);
void l_open_program(lua_State *L);
void l_open_compile(lua_State *L);
void l_open_kernel(lua_State *L);
void l_open_scalar(lua_State *L);
void l_open_bytes(lua_State *L);
void l_open_tensor_map(lua_State *L);
void l_open_global(lua_State *L);
void l_open_stream(lua_State *L);
void l_open_sequence(lua_State *L);
void l_open_occupancy(lua_State *L);
void l_open_metrics(lua_State *L);
void l_open_process(lua_State *L);
/* os.execute and io.popen replaced: a script's commands start as every child does (l_shell.c). */
void l_open_shell(lua_State *L);
void l_open_db(lua_State *L);
/* gpuexp._write_file, _open_output and _output_folder (l_files.c), set in the table on top. */
void l_open_files(lua_State *L);
void l_open_collect(lua_State *L);
void l_open_lines(lua_State *L);
/* Fills the gpuexp table at the top of the stack with the module functions. */
void l_open_gpuexp(lua_State *L);

/* Stop signals in this process (gx_process_catch_stops): "interrupted" raised at the next Lua
   instruction; the process ended grace_s later if the run has not come back by then. */
void l_process_catch_stops(lua_State *L, double grace_s);

/* The metric names of a preset (lua/gpuexp/api/metrics.lua's presets, the one list), written into
   slots of slot_size bytes: how many, 0 when name is no preset, -1 when the presets cannot be read
   (l_metrics.c; for gpuexp metrics). */
int l_metric_preset(const char *name, char *slots, size_t slot_size, int max);

/* require("gpuexp.x") finds the modules compiled into the binary (or GPUEXP_LUA_DIR's). */
void l_install_searcher(lua_State *L);

#endif
