/* thread.h on Win32: slim reader/writer locks, condition variables and _beginthreadex (Windows
 * Vista and later; no pthreads library needed, with MSVC, clang-cl or MinGW). */
#ifdef _WIN32

#include "thread.h"

#include <errno.h>
#include <process.h>

#include "clock.h"

void rx_mutex_init(rx_mutex *m) { InitializeSRWLock(m); }

void rx_mutex_destroy(rx_mutex *m) { (void)m; /* SRW locks hold no resources */ }

void rx_cond_init(rx_cond *c) { InitializeConditionVariable(c); }

void rx_cond_destroy(rx_cond *c) { (void)c; }

int rx_cond_wait_until(rx_cond *c, rx_mutex *m, int64_t deadline_us)
{
    DWORD wait_ms = INFINITE;
    if (deadline_us >= 0) {
        int64_t left_us = deadline_us - rx_clock_us();
        if (left_us <= 0)
            return 1;
        int64_t left_ms = (left_us + 999) / 1000; /* never wake before the deadline */
        wait_ms = left_ms >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)left_ms;
    }
    SleepConditionVariableSRW(c, m, wait_ms, 0);
    return deadline_us >= 0 && rx_clock_us() >= deadline_us;
}

static unsigned __stdcall thread_main(void *arg)
{
    rx_thread *th = arg;
    th->fn(th->arg);
    return 0;
}

int rx_thread_start(rx_thread *th, void (*fn)(void *), void *arg, int block_signals)
{
    (void)block_signals; /* Windows delivers no asynchronous signal to other threads */
    th->fn = fn;
    th->arg = arg;
    uintptr_t handle = _beginthreadex(NULL, 0, thread_main, th, 0, NULL);
    if (handle == 0)
        return errno != 0 ? errno : EAGAIN;
    th->handle = (HANDLE)handle;
    return 0;
}

int rx_thread_join(rx_thread *th, long timeout_ms)
{
    DWORD wait_ms = timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms;
    DWORD rc = WaitForSingleObject(th->handle, wait_ms);
    CloseHandle(th->handle); /* a thread still running goes on without its handle (detached) */
    th->handle = NULL;
    return rc == WAIT_OBJECT_0 ? 0 : -1;
}

void rx_yield(void) { SwitchToThread(); }

void rx_sleep_us(int64_t us) { Sleep((DWORD)((us + 999) / 1000)); }

int rx_cpu_count(void)
{
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    return n > 0 ? (int)n : 1;
}

#endif
