/* Taking the GIL back after a blocking wait without sleeping on it, when it is about to be free.
 *
 * A blocking request releases the GIL while the network works and takes it back when its answer
 * is in. With several threads on one client, another thread usually holds the GIL at that
 * moment, for the few microseconds of its own Python work (building the next request, reading
 * its answer). CPython's take_gil then puts the caller to sleep on a condition variable and the
 * holder wakes it when it lets go: two context switches, which on the 2-vCPU virtual machines
 * this project is measured on cost more than the Python work they wait for. 10 threads on one
 * client made 1.9 voluntary context switches per request, half of them waiting for the GIL
 * (`perf record -e context-switches`; pycurl: 1.3).
 *
 * What it pays for, measured when it went in: the 10-thread cell (10 threads sharing one
 * Client, GET; scripts/bench.sh), 5 alternating rounds, medians: 27,441 -> 32,212 requests/s
 * and 55.8 -> 47.5 us of CPU per request, voluntary context switches 1.79 -> 1.21 per request;
 * on Python 3.13, 25.7-28.9k -> 36.1-37.0k requests/s. Blocking streams were measured without
 * it being worth it there (14.6-15.6k -> 11.7-13.5k), so their waits do not spin.
 *
 * So before taking the GIL back, a blocking caller looks at whether it is held and, if so,
 * yields the CPU until it is not, for up to RX_GIL_SPIN_US; then it asks for it as usual.
 * Nothing depends on what the spin sees: it is only a hint to ask when the GIL is free, and
 * PyEval_RestoreThread decides as ever.
 *
 * Whether the GIL is held is not in CPython's API. rx_gil_probe_init finds the interpreter's
 * GIL state with CPython's internal headers of the version being built against (the extension
 * is built per minor version) and checks what it found: while the caller holds the GIL, the
 * state must say "locked" and name the caller's thread state as its last holder. Anything else
 * (a free-threaded build, a version whose layout is not known here, a check that fails) leaves
 * the probe off and every wait takes the GIL as before.
 *
 * A holder that keeps the GIL longer than the spin (CPU-bound Python in another thread, which
 * lets go only every sys.getswitchinterval(), 5 ms) would cost every request a full spin, so a
 * spin that times out with the same thread holding the GIL as when it began makes the next 16
 * waits take the GIL without spinning, doubling up to 256 while spins keep timing out; one
 * that sees the GIL freed starts over at 16. A spin that times out while the GIL went from
 * thread to thread (many callers in Python at once) does not back off: the GIL is busy, not
 * kept, and the next wait may well find it free. Never on a single
 * CPU, where the holder needs the very CPU the spinner would be using.
 *
 * rx_gil_probe_init with the GIL held (at import); rx_gil_wait_free with it released; the rest
 * from any thread. The counters are relaxed atomics: a hint shared by every thread of the
 * process, not state.
 */
#ifndef RX_GIL_H
#define RX_GIL_H

#define RX_GIL_SPIN_US 100

/* Find and check the GIL's state. GIL held. 1 if the probe is on, else 0. */
int rx_gil_probe_init(void);

/* 1 if the probe is on. */
int rx_gil_probe_on(void);
/* Whether this build knows the layout of the interpreter it was compiled for (its internal
 * headers were there, a version from 3.9 to 3.13, with a GIL): the probe can be on only then. */
int rx_gil_probe_layout_known(void);

/* Is the GIL held by some thread? 0 when the probe is off. Any thread. */
int rx_gil_held(void);

/* GIL released: if another thread holds the GIL, yield the CPU until it lets go or for up to
 * RX_GIL_SPIN_US (see above). Returns at once when the probe is off or the GIL is free. */
void rx_gil_wait_free(void);

/* Process-wide counts since the module was loaded, for tests and Engine statistics. */
typedef struct rx_gil_stats {
    long long spins;     /* spins that ended with the GIL free */
    long long busy;      /* gave up after RX_GIL_SPIN_US, other threads having had it in turn */
    long long timeouts;  /* gave up after RX_GIL_SPIN_US, one thread having kept it */
    long long skipped;   /* waits that found the GIL held and did not spin (back-off) */
} rx_gil_stats;

void rx_gil_get_stats(rx_gil_stats *out);

#endif
