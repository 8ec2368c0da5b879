/* The monotonic clock every deadline and timed wait is measured on, and the loop thread's
 * notion of "now", read once per wake-up so callbacks never call the clock. */
#ifndef RX_CLOCK_H
#define RX_CLOCK_H

#include <stdint.h>

#include "thread.h"

extern RX_THREAD_LOCAL int64_t rx_loop_now_ms;

#ifdef _WIN32
static inline int64_t rx_clock_us(void)
{
    static LARGE_INTEGER frequency; /* fixed at boot: a racing first read writes the same */
    LARGE_INTEGER now;
    if (frequency.QuadPart == 0)
        QueryPerformanceFrequency(&frequency);
    QueryPerformanceCounter(&now);
    return (int64_t)(now.QuadPart / frequency.QuadPart * 1000000 +
                     now.QuadPart % frequency.QuadPart * 1000000 / frequency.QuadPart);
}
#else
#include <time.h>

static inline int64_t rx_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
#endif

static inline int64_t rx_clock_ms(void) { return rx_clock_us() / 1000; }

/* When a wait of timeout_ms that starts now ends, in rx_clock_us() time, as the timed waits
 * (rx_cond_wait_until, the latches) take it: -1 (no end) for a negative timeout. */
static inline int64_t rx_clock_deadline_us(long timeout_ms)
{
    return timeout_ms < 0 ? -1 : rx_clock_us() + (int64_t)timeout_ms * 1000;
}

#endif
