/* The C test programs' one assertion: CHECK(cond, printf-style message) counts a failure and
 * says where, without stopping, so one run reports every broken check; `failures` is what the
 * program's exit status is made of. */
#ifndef RX_TEST_CHECK_H
#define RX_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#endif
