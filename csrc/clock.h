/* The loop thread's notion of "now", read once per wake-up so callbacks never call the clock. */
#ifndef RX_CLOCK_H
#define RX_CLOCK_H

#include <stdint.h>
#include <time.h>

extern __thread int64_t rx_loop_now_ms;

static inline int64_t rx_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* `timeout_ms` from now on `clock`, as the absolute time that timed waits take (which clock
 * depends on the wait: condition variables default to CLOCK_REALTIME). */
static inline struct timespec rx_clock_deadline(clockid_t clock, long timeout_ms)
{
    struct timespec at;
    clock_gettime(clock, &at);
    at.tv_sec += timeout_ms / 1000;
    at.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec += 1;
        at.tv_nsec -= 1000000000L;
    }
    return at;
}

static inline int64_t rx_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
