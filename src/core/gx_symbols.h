/* Kernel names as C++ writes them: demangling (the C++ runtime's __cxa_demangle, opened with
   dlopen) and matching a name a user gives ("my_kernel", "ns::k<float, 128>", the full
   signature or the mangled symbol) against a module's symbols. */
#ifndef GX_SYMBOLS_H
#define GX_SYMBOLS_H

#include <stddef.h>

/* The demangled signature ("void ns::k<float, 128>(float*, int)"), malloc'ed; NULL for a name that
   is not mangled (extern "C") or when no demangler can be loaded. */
char *gx_demangle(const char *symbol);

/* The name as a user writes it: the demangled signature without return type and parameter list
   ("ns::k<float, 128>"); an extern "C" name as is. Written into out. */
void gx_symbol_name(const char *symbol, char *out, size_t size);

/* 1 when `wanted` names `symbol`: the symbol itself, its demangled signature, its name, or its name
   without the template arguments ("k" for k<float, 128>), each also without leading namespaces
   ("k" for ns::k), compared in canonical form (gx_cxxname.h: spaces, literal suffixes, true/1,
   const placement and library ABI namespaces do not matter). */
int gx_symbol_matches(const char *symbol, const char *wanted);

/* Finds `wanted` among count symbols: returns the index, -1 when none matches, -2 when several
   do (first and second set to the first two). */
int gx_symbol_find(const char *const *symbols, int count, const char *wanted, int *first, int *second);

/* The indices of the (at most max) symbols whose canonical names are nearest to wanted's (edit
   distance, also against the name without its namespaces), nearest first; returns how many. */
int gx_symbol_nearest(const char *const *symbols, int count, const char *wanted, int *nearest, int max);

/* The index of a symbol that wanted names but for enumerators where the symbol has enum casts
   (wanted "k<cub::BLOCK_SCAN_RAKING>", symbol "k<(cub::BlockScanAlgorithm)0>"); -1 when none. */
int gx_symbol_enumerator_match(const char *const *symbols, int count, const char *wanted);

#endif
