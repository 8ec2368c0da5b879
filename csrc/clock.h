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

static inline int64_t rx_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
