/* thread.h on POSIX threads: Linux (glibc and musl), macOS, the BSDs. Plain POSIX.1-2008, no
 * GNU extension: scripts/check_portable.sh compiles it with _POSIX_C_SOURCE alone. */
#ifndef _WIN32

#include "thread.h"

#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

void rx_mutex_init(rx_mutex *m) { pthread_mutex_init(m, NULL); }

void rx_mutex_destroy(rx_mutex *m) { pthread_mutex_destroy(m); }

#ifndef __APPLE__
/* rx_clock_us()'s clock for every condition variable: made once, not per transfer (each has
 * one, rx_transfer_new). */
static pthread_condattr_t monotonic;
static pthread_once_t monotonic_once = PTHREAD_ONCE_INIT;

static void make_monotonic(void)
{
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
}
#endif

void rx_cond_init(rx_cond *c)
{
#ifdef __APPLE__
    /* macOS has no pthread_condattr_setclock: timed waits are relative there (below). */
    pthread_cond_init(c, NULL);
#else
    pthread_once(&monotonic_once, make_monotonic);
    pthread_cond_init(c, &monotonic);
#endif
}

void rx_cond_destroy(rx_cond *c) { pthread_cond_destroy(c); }

int rx_cond_wait_until(rx_cond *c, rx_mutex *m, int64_t deadline_us)
{
    if (deadline_us < 0) {
        pthread_cond_wait(c, m);
        return 0;
    }
#ifdef __APPLE__
    int64_t left_us = deadline_us - rx_clock_us();
    if (left_us <= 0)
        return 1;
    struct timespec rel = {.tv_sec = (time_t)(left_us / 1000000),
                           .tv_nsec = (long)(left_us % 1000000) * 1000};
    pthread_cond_timedwait_relative_np(c, m, &rel);
#else
    struct timespec at = {.tv_sec = (time_t)(deadline_us / 1000000),
                          .tv_nsec = (long)(deadline_us % 1000000) * 1000};
    pthread_cond_timedwait(c, m, &at);
#endif
    return rx_clock_us() >= deadline_us;
}

static void *thread_main(void *arg)
{
    rx_thread *th = arg;
    th->fn(th->arg);
    pthread_mutex_lock(&th->lock);
    th->returned = 1;
    pthread_cond_broadcast(&th->returned_cond);
    pthread_mutex_unlock(&th->lock);
    return NULL;
}

int rx_thread_start(rx_thread *th, void (*fn)(void *), void *arg, int block_signals)
{
    th->fn = fn;
    th->arg = arg;
    th->returned = 0;
    rx_mutex_init(&th->lock);
    rx_cond_init(&th->returned_cond);
    /* The new thread inherits the signal mask in force when it is created. */
    sigset_t all, old;
    if (block_signals) {
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
    }
    int rc = pthread_create(&th->handle, NULL, thread_main, th);
    if (block_signals)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        rx_cond_destroy(&th->returned_cond);
        rx_mutex_destroy(&th->lock);
    }
    return rc;
}

int rx_thread_join(rx_thread *th, long timeout_ms)
{
    if (timeout_ms >= 0) {
        int64_t deadline_us = rx_clock_deadline_us(timeout_ms);
        pthread_mutex_lock(&th->lock);
        while (!th->returned && !rx_cond_wait_until(&th->returned_cond, &th->lock, deadline_us)) {
        }
        int returned = th->returned;
        pthread_mutex_unlock(&th->lock);
        if (!returned) {
            pthread_detach(th->handle); /* `th` stays allocated: the thread still writes it */
            return -1;
        }
    }
    pthread_join(th->handle, NULL); /* at once when it has returned */
    rx_cond_destroy(&th->returned_cond);
    rx_mutex_destroy(&th->lock);
    return 0;
}

void rx_yield(void) { sched_yield(); }

void rx_sleep_us(int64_t us)
{
    struct timespec left = {.tv_sec = (time_t)(us / 1000000),
                            .tv_nsec = (long)(us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0) { /* a signal: sleep the rest */
    }
}

int rx_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

#endif
