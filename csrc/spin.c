/* Spin-before-sleep for blocking waiters (caller's thread; see spin.h for why). */
#include "spin.h"

#include "clock.h"
#include "thread.h"
#include "transfer_impl.h"

enum {
    SPIN_FLOOR_US = 60,     /* the cap before any wake-up penalty is known, and its least */
    SPIN_CEIL_US = 250,     /* the cap's most, and how long a probe spins */
    PROBE_EVERY_MIN = 16,   /* waits between probes while spinning is off, at first ... */
    PROBE_EVERY_MAX = 256,  /* ... and after probes that did not bring spinning back */
    SAMPLE_MAX_US = 1000000 /* a sample is clamped to this */
};

static inline int load(const int *field) { return __atomic_load_n(field, __ATOMIC_RELAXED); }

static inline void store(int *field, int value)
{
    __atomic_store_n(field, value, __ATOMIC_RELAXED);
}

/* A moving average with weight 1/8 (a few odd waits do not flip the decision); 0 = no sample
 * yet, so the first sample is taken as it is. */
static int averaged(int average, int sample)
{
    return average == 0 ? sample : average + (sample - average) / 8;
}

void rx_spin_init(rx_spin *e)
{
    e->spinners = 0;
    e->waits_since_probe = 0;
    e->probe_every = PROBE_EVERY_MIN;
    e->wait_estimate_us = SPIN_FLOOR_US / 2;
    e->spun_us = e->slept_us = 0;
    e->may_spin = rx_cpu_count() > 1;
}

int rx_spin_cap_us(const rx_spin *e)
{
    int spun = load(&e->spun_us), slept = load(&e->slept_us);
    int cap = spun > 0 && slept > spun ? 2 * (slept - spun) : 0;
    return cap < SPIN_FLOOR_US ? SPIN_FLOOR_US : cap > SPIN_CEIL_US ? SPIN_CEIL_US : cap;
}

int rx_spin_is_on(const rx_spin *e)
{
    return e->may_spin && load(&e->wait_estimate_us) <= rx_spin_cap_us(e);
}

int rx_spin_budget_us(rx_spin *e, int *probe)
{
    *probe = 0;
    if (!e->may_spin)
        return 0;
    if (!rx_spin_is_on(e)) {
        if (__atomic_add_fetch(&e->waits_since_probe, 1, __ATOMIC_RELAXED) < load(&e->probe_every))
            return 0;
        store(&e->waits_since_probe, 0);
        *probe = 1;
        return SPIN_CEIL_US;
    }
    int estimate = load(&e->wait_estimate_us), cap = rx_spin_cap_us(e);
    int budget = estimate + estimate / 4 + 5;
    return budget > cap ? cap : budget;
}

void rx_spin_note(rx_spin *e, int64_t sample_us, int ended, int probe)
{
    int sample = sample_us < 0 ? 0 : sample_us > SAMPLE_MAX_US ? SAMPLE_MAX_US : (int)sample_us;
    if (ended == RX_WAIT_SPUN)
        store(&e->spun_us, averaged(load(&e->spun_us), sample));
    else if (sample <= 2 * SPIN_CEIL_US) /* longer: a slow answer, not a slow wake-up */
        store(&e->slept_us, averaged(load(&e->slept_us), sample));
    int estimate = load(&e->wait_estimate_us);
    if (probe && ended == RX_WAIT_SPUN) /* a probe that caught the event is the best evidence */
        estimate = sample;
    else
        estimate = averaged(estimate, sample);
    store(&e->wait_estimate_us, estimate);
    if (probe) {
        /* Spinning back on: probe often again next time it goes off. Still off: probe less. */
        int every = load(&e->probe_every);
        if (rx_spin_is_on(e))
            every = PROBE_EVERY_MIN;
        else if (every < PROBE_EVERY_MAX)
            every *= 2;
        store(&e->probe_every, every);
    }
}

void rx_spin_record(rx_spin *e, rx_transfer *t, int ended, int probe)
{
    if (t->wait.started_us == 0)
        return; /* no wait began, or it has been recorded */
    rx_spin_note(e, t->wait.completed_us - t->wait.started_us, ended, probe);
    t->wait.started_us = 0;
    t->wait.probe = 0;
}

int rx_spin_wait(rx_spin *e, rx_transfer *t)
{
    t->wait.started_us = rx_clock_us();
    t->wait.probe = 0;
    int probe;
    int budget = rx_spin_budget_us(e, &probe);
    if (budget == 0)
        return 0;
    if (__atomic_fetch_add(&e->spinners, 1, __ATOMIC_ACQUIRE) != 0) {
        __atomic_fetch_sub(&e->spinners, 1, __ATOMIC_RELEASE);
        return 0;
    }
    t->wait.probe = probe; /* a probe that misses is still one when its sleep is recorded */
    int done = 0;
    int64_t until = t->wait.started_us + budget;
    for (;;) {
        if (rx_transfer_collectable(t)) {
            done = 1;
            break;
        }
        if (rx_clock_us() >= until)
            break;
        /* Yield rather than only pause: if the loop thread (or the server) is runnable on this
         * CPU, a pure spin would keep it off the CPU it needs to finish our transfer. */
        rx_yield();
    }
    __atomic_fetch_sub(&e->spinners, 1, __ATOMIC_RELEASE);
    if (done)
        rx_spin_record(e, t, RX_WAIT_SPUN, probe);
    return done;
}

void rx_spin_collected(rx_spin *e, rx_transfer *t)
{
    rx_spin_record(e, t, RX_WAIT_SLEPT, t->wait.probe);
}
