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
 * without): every wait's
 * submit-to-completion time (spinning or sleeping) feeds a moving average, and a waiter spins
 * only when that average is below SPIN_MAX_US (60), a little longer than the average; otherwise
 * one wait in SPIN_PROBE_EVERY (16) spins to re-measure. One waiter at a time spins, yielding the
 * CPU between checks (the loop thread may need this very CPU); never on a single CPU.
 *
 * Any thread; the fields are relaxed atomics (a hint, not state). One per engine.
 */
#ifndef RX_SPIN_H
#define RX_SPIN_H

#include "transfer.h"

typedef struct rx_spin {
    int spinners;            /* waiters spinning right now (at most one spins) */
    int wait_estimate_us;    /* moving average of submit-to-completion times of waits */
    int waits_since_probe;   /* waits that did not spin since the last probing spin */
    int may_spin;            /* more than one CPU online */
} rx_spin;

void rx_spin_init(rx_spin *spin);

/* Before a blocking waiter sleeps on the transfer's semaphore: spin for a few tens of
 * microseconds in case it is about to be delivered. 1 if it was (the semaphore has been
 * consumed), else 0. */
int rx_spin_wait(rx_spin *spin, rx_transfer *t);

/* After a wait that did not end in rx_spin_wait: feed its duration to the estimate. Each wait
 * counts once (a second call does nothing), so an event loop's drain may call it for every
 * transfer whose spin gave up: without that, a slow server's waits would never reach the
 * estimate and every async request would spin for nothing. */
void rx_spin_wait_finished(rx_spin *spin, rx_transfer *t);

/* How long a wait that starts now should spin before it sleeps, in microseconds (0: sleep at
 * once). *probe is set when this is the one-in-SPIN_PROBE_EVERY look at a slow server. Used by
 * rx_spin_wait and by a caller that drives the engine itself (engine.c), which spins on epoll. */
int rx_spin_budget_us(rx_spin *spin, int *probe);

/* A wait that began at t->wait.started_us ended with the transfer delivered: feed it to the
 * estimate (a probe's sample replaces the estimate outright). Each wait counts once. */
void rx_spin_record(rx_spin *spin, rx_transfer *t, int probe);

/* The same for any wait of sample_us that ended with what it waited for (the loop thread
 * keeps an rx_spin of its own for its waits for an event while transfers are in flight). */
void rx_spin_note(rx_spin *spin, int64_t sample_us, int probe);

#endif
