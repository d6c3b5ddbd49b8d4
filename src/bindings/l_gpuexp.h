/* What main calls in the bindings: the openers of each type or set of functions into the gpuexp
   table (l_open_gpuexp opens them all) and the stop signals' handling (require()'s searcher is
   l_searcher.h). What the binding files declare for each other is in
   l_types.h (the types), l_util.h (errors, options, setters) and l_wire.h (the supervisor-worker
   codec). */
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
/* gpuexp._trace_start and _trace_stop (l_trace.c): the timeline of --trace. */
void l_open_trace(lua_State *L);
/* Fills the gpuexp table at the top of the stack with the module functions. */
void l_open_gpuexp(lua_State *L);

/* Stop signals in this process (gx_process_catch_stops): "interrupted" raised at the next Lua
   instruction; the process ended grace_s later if the run has not come back by then. */
void l_process_catch_stops(lua_State *L, double grace_s);

#endif
