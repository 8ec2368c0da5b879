/* Spin-before-sleep for blocking waiters.
 *
 * A blocking request to a nearby server often finishes within tens of microseconds of being
 * submitted. Putting the waiter to sleep and waking it again costs more than that: two
 * scheduler passes, and on virtual machines an inter-processor interrupt and a halted vCPU to
 * resume (measured on the 2-vCPU CI machine: keep-alive GET against a local nginx went from
 * 11.6k to 56.6k requests/s and from 40 to 31 us of CPU per request with a 50 us spin).
 *
 * The spin is bounded and adaptive, so slow servers do not pay for it (a server that answers in
 * 1 ms cost 118 us of CPU per request with a fixed 50 us spin in the driving caller, 25 us
 * without). Every wait's submit-to-completion time (spinning or sleeping) feeds a moving
 * average, the estimate, and a waiter spins only while the estimate is below the spin cap:
 *
 *   - The cap is what sleeping costs on this machine, measured rather than assumed: the waits
 *     that slept are compared with the waits that ended while spinning, and the difference (the
 *     wake-up penalty) is what a spin saves. Spinning is allowed for up to twice that penalty,
 *     never less than SPIN_FLOOR_US nor more than SPIN_CEIL_US. (A wait that slept more than
 *     twice SPIN_CEIL_US met a slow answer, not a slow wake-up: it stays out of the comparison,
 *     or a server that now and then takes 1 ms would raise the cap.) A fixed cap suited one machine
 *     only: on a slower one a 70 us answer is common, a 60 us cap switched spinning off, and a
 *     sequential blocking request lost a third of its throughput (docs/performance.md).
 *   - Above the cap, one wait in probe_every spins (up to SPIN_CEIL_US) to re-measure: waits
 *     that sleep include the wake-up latency, so the estimate can stay high after the server
 *     got fast again. A probe that does not bring spinning back doubles probe_every (16 up to
 *     256), so a slow server pays for few probes.
 *
 * One waiter at a time spins, yielding the CPU between checks (the loop thread may need this
 * very CPU); never on a single CPU.
 *
 * Any thread; the fields are relaxed atomics (a hint, not state). One per engine, and one more
 * for the loop thread's own waits (engine.c).
 */
#ifndef RX_SPIN_H
#define RX_SPIN_H

#include "transfer.h"

typedef struct rx_spin {
    int spinners;          /* waiters spinning right now (at most one spins) */
    int wait_estimate_us;  /* moving average of submit-to-completion times of waits */
    int spun_us;           /* moving average of the waits that ended while spinning (0: none) */
    int slept_us;          /* moving average of the waits that slept (0: none) */
    int waits_since_probe; /* waits that did not spin since the last probing spin */
    int probe_every;       /* waits between two probing spins while spinning is off */
    int may_spin;          /* more than one CPU online */
} rx_spin;

/* How a wait ended, for rx_spin_note / rx_spin_record. */
enum { RX_WAIT_SLEPT = 0, RX_WAIT_SPUN = 1 };

void rx_spin_init(rx_spin *spin);

/* Before a blocking waiter sleeps on the transfer's latch: spin for a few tens of microseconds
 * in case it is about to be delivered. 1 if it was, else 0. */
int rx_spin_wait(rx_spin *spin, rx_transfer *t);

/* A waiter collected the transfer after a wait that did not end in rx_spin_wait (it slept, or
 * an event loop drained it): feed the wait's duration to the estimate. Each wait counts once
 * (a second call does nothing), so an event loop's drain may call it for every transfer whose
 * spin gave up: without that, a slow server's waits would never reach the estimate and every
 * async request would spin for nothing. */
void rx_spin_collected(rx_spin *spin, rx_transfer *t);

/* How long a wait that starts now should spin before it sleeps, in microseconds (0: sleep at
 * once). *probe is set when this is a probing spin, with spinning otherwise off. Used by
 * rx_spin_wait, by a caller that drives the engine itself (drive.c) and by the loop thread
 * (engine.c), which spin on epoll. */
int rx_spin_budget_us(rx_spin *spin, int *probe);

/* The most a wait may spin now (the cap above). */
int rx_spin_cap_us(const rx_spin *spin);

/* Whether waits spin now (the estimate is within the cap), as opposed to only the occasional
 * probe. Reads the state without changing it, unlike rx_spin_budget_us. */
int rx_spin_is_on(const rx_spin *spin);

/* A wait that began at t->wait.started_us ended with the transfer delivered, while spinning
 * (RX_WAIT_SPUN) or after sleeping (RX_WAIT_SLEPT): feed it to the estimate. Each wait counts
 * once. */
void rx_spin_record(rx_spin *spin, rx_transfer *t, int ended, int probe);

/* The same for any wait of sample_us that ended with what it waited for (the loop thread
 * keeps an rx_spin of its own for its waits for an event while transfers are in flight). */
void rx_spin_note(rx_spin *spin, int64_t sample_us, int ended, int probe);

#endif
