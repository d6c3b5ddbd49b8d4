/* The C unit tests' check: CHECK(condition) counts a check and, when it fails, counts the failure
   and names the file, line and condition on stderr, and the test goes on to its next check. A
   test's main returns failures ? 1 : 0. */
#ifndef GX_TEST_CHECK_H
#define GX_TEST_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(condition)                                                                                               \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(condition)) {                                                                                            \
            failures++;                                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);                              \
        }                                                                                                              \
    } while (0)

#endif
