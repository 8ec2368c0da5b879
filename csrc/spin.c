/* Spin-before-sleep for blocking waiters (caller's thread; see spin.h for why). */
#include "spin.h"

#include <sched.h>
#include <unistd.h>

#include "clock.h"

enum { SPIN_MAX_US = 60, SPIN_PROBE_EVERY = 16 };

void rx_spin_init(rx_spin *e)
{
    e->spinners = 0;
    e->waits_since_probe = 0;
    e->wait_estimate_us = SPIN_MAX_US / 2;
    e->may_spin = sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

int rx_spin_budget_us(rx_spin *e, int *probe)
{
    *probe = 0;
    if (!e->may_spin)
        return 0;
    int estimate = __atomic_load_n(&e->wait_estimate_us, __ATOMIC_RELAXED);
    if (estimate > SPIN_MAX_US) {
        /* Waits that sleep include the wake-up latency, so the average can stay high after
         * the server got fast again: every SPIN_PROBE_EVERY waits, spin once to look. */
        if (__atomic_add_fetch(&e->waits_since_probe, 1, __ATOMIC_RELAXED) < SPIN_PROBE_EVERY)
            return 0;
        __atomic_store_n(&e->waits_since_probe, 0, __ATOMIC_RELAXED);
        *probe = 1;
        return SPIN_MAX_US;
    }
    int budget = estimate + estimate / 4 + 5;
    return budget > SPIN_MAX_US ? SPIN_MAX_US : budget;
}

void rx_spin_note(rx_spin *e, int64_t sample_us, int probe)
{
    if (sample_us < 0)
        sample_us = 0;
    if (sample_us > 1000000)
        sample_us = 1000000;
    int estimate = __atomic_load_n(&e->wait_estimate_us, __ATOMIC_RELAXED);
    if (probe) /* a probe that caught the event is the best evidence we have */
        estimate = (int)sample_us;
    else /* moving average with weight 1/8: a few slow waits do not switch spinning off */
        estimate += ((int)sample_us - estimate) / 8;
    __atomic_store_n(&e->wait_estimate_us, estimate, __ATOMIC_RELAXED);
}

void rx_spin_record(rx_spin *e, rx_transfer *t, int probe)
{
    if (t->wait.started_us == 0)
        return; /* no wait began, or it has been recorded */
    rx_spin_note(e, t->wait.completed_us - t->wait.started_us, probe);
    t->wait.started_us = 0;
}

int rx_spin_wait(rx_spin *e, rx_transfer *t)
{
    t->wait.started_us = rx_clock_us();
    int probe;
    int budget = rx_spin_budget_us(e, &probe);
    if (budget == 0)
        return 0;
    if (__atomic_fetch_add(&e->spinners, 1, __ATOMIC_ACQUIRE) != 0) {
        __atomic_fetch_sub(&e->spinners, 1, __ATOMIC_RELEASE);
        return 0;
    }
    int done = 0;
    int64_t until = t->wait.started_us + budget;
    for (;;) {
        if (rx_transfer_try_collect(t)) {
            done = 1;
            break;
        }
        if (rx_clock_us() >= until)
            break;
        /* Yield rather than only pause: if the loop thread (or the server) is runnable on this
         * CPU, a pure spin would keep it off the CPU it needs to finish our transfer. */
        sched_yield();
    }
    __atomic_fetch_sub(&e->spinners, 1, __ATOMIC_RELEASE);
    if (done)
        rx_spin_record(e, t, probe);
    return done;
}

void rx_spin_wait_finished(rx_spin *e, rx_transfer *t) { rx_spin_record(e, t, 0); }
