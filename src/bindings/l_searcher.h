/* require("gpuexp.x") finds the modules compiled into the binary (or GPUEXP_LUA_DIR's): the searcher,
   in a file of its own so that every binding that needs the library depends on it alone. */
#ifndef L_SEARCHER_H
#define L_SEARCHER_H

#include <lua.h>

/* Puts the embedded modules' searcher first in package.searchers. */
void l_install_searcher(lua_State *L);

#endif
