/* Threads, locks and condition variables: the engine's only use of the OS thread API.
 *
 * Two implementations, chosen at compile time: POSIX threads (thread_posix.c: Linux, macOS,
 * the BSDs, musl) and Win32 (thread_windows.c: SRW locks, condition variables, _beginthreadex).
 * Every timed wait takes an absolute deadline on rx_clock_us()'s monotonic clock, so a change
 * of the wall clock never shortens or stretches one.
 *
 * The readiness poller, the loop's wake-up, the completion queue's notification handle and the
 * transfer latch are the *runtime*-selected part of the platform layer: platform.h.
 */
#ifndef RX_THREAD_H
#define RX_THREAD_H

#include <stdint.h>

/* A variable each thread has a copy of. */
#if defined(_MSC_VER) && !defined(__clang__)
#define RX_THREAD_LOCAL __declspec(thread)
#else
#define RX_THREAD_LOCAL _Thread_local
#endif

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

typedef SRWLOCK rx_mutex;
typedef CONDITION_VARIABLE rx_cond;
typedef struct rx_thread {
    HANDLE handle;
    void (*fn)(void *);
    void *arg;
} rx_thread;

static inline void rx_mutex_lock(rx_mutex *m) { AcquireSRWLockExclusive(m); }
static inline void rx_mutex_unlock(rx_mutex *m) { ReleaseSRWLockExclusive(m); }
static inline void rx_cond_signal(rx_cond *c) { WakeConditionVariable(c); }
static inline void rx_cond_broadcast(rx_cond *c) { WakeAllConditionVariable(c); }
#else
#include <pthread.h>

typedef pthread_mutex_t rx_mutex;
typedef pthread_cond_t rx_cond;
typedef struct rx_thread {
    pthread_t handle;
    void (*fn)(void *);
    void *arg;
    /* POSIX has no timed join (pthread_timedjoin_np is glibc's): the thread says it returned. */
    pthread_mutex_t lock;
    pthread_cond_t returned_cond;
    int returned;
} rx_thread;

static inline void rx_mutex_lock(rx_mutex *m) { pthread_mutex_lock(m); }
static inline void rx_mutex_unlock(rx_mutex *m) { pthread_mutex_unlock(m); }
static inline void rx_cond_signal(rx_cond *c) { pthread_cond_signal(c); }
static inline void rx_cond_broadcast(rx_cond *c) { pthread_cond_broadcast(c); }
#endif

void rx_mutex_init(rx_mutex *m);
void rx_mutex_destroy(rx_mutex *m);
/* A condition variable whose timed waits run on the monotonic clock. */
void rx_cond_init(rx_cond *c);
void rx_cond_destroy(rx_cond *c);
/* Wait with `m` held until signalled (or spuriously woken) or until deadline_us (rx_clock_us()
 * time; < 0 waits for ever). 0, or 1 once the deadline has passed. */
int rx_cond_wait_until(rx_cond *c, rx_mutex *m, int64_t deadline_us);

/* Start fn(arg) on a new thread. `th` must stay valid until rx_thread_join() returned 0 (or
 * for ever, after it returned -1). With block_signals, the thread (and any it starts) receives no
 * asynchronous signal: they belong to Python's main thread (a no-op on Windows). 0, or an
 * error code that strerror() names. */
int rx_thread_start(rx_thread *th, void (*fn)(void *), void *arg, int block_signals);
/* Wait up to timeout_ms for the thread to return, then release it: 0 when it returned, -1 when
 * it still runs (it is detached then, and its resources are the caller's to leak). */
int rx_thread_join(rx_thread *th, long timeout_ms);

/* Give the CPU to another runnable thread, if any. */
void rx_yield(void);
/* Sleep for about `us` microseconds (Windows: whole milliseconds, rounded up). */
void rx_sleep_us(int64_t us);
/* Processors online (at least 1). */
int rx_cpu_count(void);

#endif
