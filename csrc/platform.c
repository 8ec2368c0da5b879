/* Which platform implementation runs (platform.h): each build has its OS's own, and Linux builds
 * the portable POSIX one too, so that the whole suite runs on it (REQUESTX_PLATFORM=posix). */
#include "platform.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"

static const rx_platform *const built[] = {
#if defined(_WIN32)
    &rx_platform_windows,
#elif defined(__linux__)
    &rx_platform_linux,
    &rx_platform_posix,
#else
    &rx_platform_posix,
#endif
};

#if defined(_WIN32)
const rx_platform *rx_platform_in_use = &rx_platform_windows;
#elif defined(__linux__)
const rx_platform *rx_platform_in_use = &rx_platform_linux;
#else
const rx_platform *rx_platform_in_use = &rx_platform_posix;
#endif

int rx_platform_select(const char *name, char *names, size_t names_len)
{
    size_t count = sizeof built / sizeof *built;
    if (name == NULL || name[0] == '\0') {
        rx_platform_in_use = built[0];
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        if (strcmp(built[i]->name, name) == 0) {
            rx_platform_in_use = built[i];
            return 0;
        }
    }
    size_t used = 0;
    if (names_len > 0)
        names[0] = '\0';
    for (size_t i = 0; i < count && used < names_len; i++) {
        int n = snprintf(names + used, names_len - used, "%s%s", i ? ", " : "", built[i]->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return -1;
}

int rx_latch_wait_marked(int *latch, long timeout_ms,
                         int (*sleep_while_marked)(int *latch, int64_t timeout_us))
{
    int64_t deadline_us = rx_clock_deadline_us(timeout_ms);
    for (;;) {
        int seen = __atomic_load_n(latch, __ATOMIC_ACQUIRE);
        if (seen == 1)
            return 0;
        int64_t left_us = -1;
        if (deadline_us >= 0 && (left_us = deadline_us - rx_clock_us()) <= 0)
            return -1;
        if (seen == 0 && !__atomic_compare_exchange_n(latch, &seen, 2, 0, __ATOMIC_ACQUIRE,
                                                      __ATOMIC_ACQUIRE))
            continue; /* set meanwhile (or marked by another waiter): look again */
        if (sleep_while_marked(latch, left_us) != 0)
            return rx_latch_is_set(latch) ? 0 : -1; /* a signal: the caller looks at Python's */
    }
}
