/* C++ names as programmers write them, brought to one canonical text so that the demangler's form
   and a hand-written form compare equal: white space dropped (one space kept between two words),
   integer literals in decimal without suffixes (256u, 256ul, 0x100 -> 256), true/false -> 1/0,
   const and volatile after what they qualify ("const float*" -> "float const*"), builtin type
   spellings as the demangler writes them ("unsigned" -> "unsigned int", "long int" -> "long"),
   struct/class/enum/union keywords and "(void)" dropped, and the library ABI inline namespaces
   (cub::CUB_300001_SM_900, thrust::THRUST_..._NS, cuda::std::__4, std::__cxx11) removed. */
#ifndef GX_CXXNAME_H
#define GX_CXXNAME_H

#include <stddef.h>

/* The canonical form of name into out; -1 when it does not fit (out then holds a prefix). */
int gx_cxx_normalize(const char *name, char *out, size_t size);

/* The edit distance between a and b (each up to 1023 characters; longer are cut): insertions,
   deletions, substitutions and swaps of two neighbours, each 1 (the optimal string alignment
   distance), so that the commonest typo, two letters swapped (fiel, shwo), is as near as one wrong. */
int gx_edit_distance(const char *a, const char *b);

/* The top-level items of the bracketed list that starts at text[0] (one of '<' or '('), trimmed,
   each malloc'ed into items (at most max); returns the count, -1 when text is not such a list.
   *end (when given) is set past the closing bracket. */
int gx_cxx_list(const char *text, char **items, int max, const char **end);

/* 1 when a (wanted) and b (a binary's name), both canonical, differ only where a has a name
   (an enumerator such as cub::BLOCK_SCAN_RAKING) and b has an enum cast such as
   (cub::BlockScanAlgorithm)0: a binary records the enum value, not the enumerator's name. */
int gx_cxx_differs_by_enumerators(const char *a, const char *b);

#endif
