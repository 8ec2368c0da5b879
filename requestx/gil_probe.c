/* The GIL probe: gil_probe.h says why a blocking caller looks at the GIL before taking it
 * back. */

/* The GIL's state is in CPython's internal headers, which need Py_BUILD_CORE. Only this file
 * defines it, and it reads two fields of one struct: no internal function is called. */
#define Py_BUILD_CORE_MODULE 1
#include <Python.h>

#include "gil_probe.h"
#include "clock.h"
#include "thread.h"

#if defined(Py_GIL_DISABLED) || PY_VERSION_HEX >= 0x030E0000 || \
    defined(EXPERIMENTAL_ISOLATED_SUBINTERPRETERS) || !__has_include("internal/pycore_runtime.h")
/* Free-threaded builds have no GIL to wait for; for 3.14 and later the layout has not been
 * checked here; a Python installed without its internal headers does not say. The probe stays
 * off. */
#define RX_GIL_LAYOUT_KNOWN 0
#else
#define RX_GIL_LAYOUT_KNOWN 1
#if PY_VERSION_HEX >= 0x030C0000
#include "internal/pycore_interp.h"  /* 3.12+: each interpreter points at its GIL */
#else
#include "internal/pycore_runtime.h" /* 3.9-3.11: one GIL in the runtime state */
#endif
#endif

#define BACKOFF_MIN 16
#define BACKOFF_MAX 256
#define KEPT_BEFORE_BACKOFF 4 /* spins in a row that found the GIL kept by one thread */

static const int *gil_locked;    /* the GIL's "locked" field; NULL: probe off */
static const void *gil_holder;   /* its "last holder" field (a pointer-sized field) */
static int backoff_every = BACKOFF_MIN; /* waits to skip after a spin that timed out */
static int backoff_left;         /* waits still to skip */
static int kept_in_a_row;        /* spins that timed out on one holder since the last success */
static long long n_spins, n_busy, n_timeouts, n_skipped;

#if RX_GIL_LAYOUT_KNOWN
/* The GIL state of the main interpreter (requestx is a single-phase module: it is only loaded
 * in interpreters that share the main one's GIL), or NULL. For 3.12+ the pointer is only
 * followed if it points at the GIL kept inside the interpreter state itself, so a layout
 * that differs from these headers is refused without reading through a stray pointer. */
static struct _gil_runtime_state *find_gil(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyInterpreterState *interp = PyInterpreterState_Main();
    if (interp == NULL || interp->ceval.gil != &interp->_gil)
        return NULL;
    return interp->ceval.gil;
#else
    return &_PyRuntime.ceval.gil;
#endif
}
#endif

/* The last holder's thread state: a pointer, declared atomic in some versions and not others. */
static uintptr_t read_holder(const void *field)
{
    return __atomic_load_n((const uintptr_t *)field, __ATOMIC_RELAXED);
}

int rx_gil_probe_init(void)
{
    gil_locked = NULL;
#if RX_GIL_LAYOUT_KNOWN
    if (rx_cpu_count() < 2)
        return 0;
    struct _gil_runtime_state *gil = find_gil();
    if (gil == NULL)
        return 0;
    /* Layouts differ between versions (3.13 made `locked` a plain int read atomically): only
     * its address is kept, and it is read as an int whichever way the version declares it. */
    const int *locked = (const int *)&gil->locked;
    /* The caller holds the GIL: its state must say so, and name this thread as the holder. */
    if (__atomic_load_n(locked, __ATOMIC_RELAXED) != 1 ||
        read_holder(&gil->last_holder) != (uintptr_t)PyThreadState_Get())
        return 0;
    gil_holder = &gil->last_holder;
    gil_locked = locked;
    return 1;
#else
    return 0;
#endif
}

int rx_gil_probe_on(void)
{
    return gil_locked != NULL;
}

int rx_gil_probe_layout_known(void) { return RX_GIL_LAYOUT_KNOWN; }

int rx_gil_held(void)
{
    return gil_locked != NULL && __atomic_load_n(gil_locked, __ATOMIC_RELAXED) == 1;
}

static void count(long long *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

void rx_gil_wait_free(void)
{
    if (!rx_gil_held())
        return;
    if (__atomic_load_n(&backoff_left, __ATOMIC_RELAXED) > 0) {
        __atomic_fetch_sub(&backoff_left, 1, __ATOMIC_RELAXED);
        count(&n_skipped);
        return;
    }
    uintptr_t holder = read_holder(gil_holder);
    int64_t give_up = rx_clock_us() + RX_GIL_SPIN_US;
    for (;;) {
        rx_yield(); /* the holder may be waiting for this very CPU */
        if (!rx_gil_held()) {
            __atomic_store_n(&kept_in_a_row, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&backoff_every, BACKOFF_MIN, __ATOMIC_RELAXED);
            count(&n_spins);
            return;
        }
        if (rx_clock_us() >= give_up)
            break;
    }
    if (read_holder(gil_holder) != holder) {
        /* Other threads had it in turn: it is busy, not kept. No back-off. */
        count(&n_busy);
        return;
    }
    count(&n_timeouts);
    /* One timeout on one holder is common with many threads on few CPUs (the holder was
     * preempted); several in a row, with no spin in between that saw the GIL freed, is a
     * thread that keeps it. */
    if (__atomic_add_fetch(&kept_in_a_row, 1, __ATOMIC_RELAXED) < KEPT_BEFORE_BACKOFF)
        return;
    int every = __atomic_load_n(&backoff_every, __ATOMIC_RELAXED);
    __atomic_store_n(&backoff_left, every, __ATOMIC_RELAXED);
    __atomic_store_n(&backoff_every, every < BACKOFF_MAX ? every * 2 : BACKOFF_MAX,
                     __ATOMIC_RELAXED);
}

void rx_gil_get_stats(rx_gil_stats *out)
{
    out->spins = __atomic_load_n(&n_spins, __ATOMIC_RELAXED);
    out->busy = __atomic_load_n(&n_busy, __ATOMIC_RELAXED);
    out->timeouts = __atomic_load_n(&n_timeouts, __ATOMIC_RELAXED);
    out->skipped = __atomic_load_n(&n_skipped, __ATOMIC_RELAXED);
}
