/* "Did you mean": the candidates closest to a misspelled name, by edit distance (gx_cxxname.h's),
   for every suggestion gpuexp makes (metric names, commands, options, experiments, axes, option keys;
   kernel names have their own ranking in gx_symbols.c). */
#ifndef GX_SUGGEST_H
#define GX_SUGGEST_H

#include <stddef.h>

/* Writes into chosen[0 .. want-1] the indexes of the candidates closest to target, best first, and
   returns how many; a candidate holding target (or held by it) counts as half as far. With
   close_only, only candidates plausibly meant (within a third of the longer name, at least 1). */
int gx_suggest(const char *target, const char *const *candidates, size_t count, int want, int close_only, int *chosen);

/* Writes " (did you mean 'a' or 'b'?)" naming the plausible candidates (up to 3), or "" when none
   is close: the one wording of every "did you mean" of gpuexp. */
void gx_did_you_mean(const char *target, const char *const *candidates, size_t count, char *out, size_t size);

#endif
