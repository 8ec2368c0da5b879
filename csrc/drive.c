/* Blocking callers drive an idle engine: the hand-off of the loop body between the loop thread
 * and a lone blocking caller. See "Blocking callers drive an idle engine" in engine.h. */
#include "engine_impl.h"

#include "clock.h"
#include "stat.h"

/* ---------------------------------------------------------------------------------------------
 * Blocking callers drive an idle engine (caller's thread, GIL released).
 */

/* How long a caller waits for the lingering loop thread to park before it submits instead. */
enum { HANDOVER_WAIT_US = 100 };

/* Become the engine's driver if the loop thread is parked (or parks at our request while it
 * lingers with nothing in flight). Returns 1 if we drive now. */
static int claim_driver(rx_engine *e)
{
    /* Only a lone blocking caller drives. With several, the loop thread serves them all: were
     * they to take turns, each hand-over with requests of others in flight would cost a
     * wake-up of the loop thread (measured: 10 threads lost a fifth of their throughput). */
    if (__atomic_load_n(&e->blocking_callers, __ATOMIC_RELAXED) > 1)
        return 0;
    int claimed = 0;
    int64_t give_up = 0;
    for (;;) {
        rx_mutex_lock(&e->lock);
        int busy = e->closing || e->queue_head != NULL;
        if (!busy && e->driver == NOBODY) {
            e->driver = CALLER;
            claimed = 1;
        }
        rx_mutex_unlock(&e->lock);
        /* Else the loop thread drives. If it is only lingering, it parks when asked; if it has
         * work, it will not, and we submit like anybody else, at once rather than after
         * HANDOVER_WAIT_US of asking (a blocking call beside a busy event loop). */
        if (claimed || busy || __atomic_load_n(&e->running, __ATOMIC_RELAXED) > 0)
            break;
        int64_t now = rx_clock_us();
        if (give_up == 0) {
            give_up = now + HANDOVER_WAIT_US;
            __atomic_store_n(&e->drive_wanted, 1, __ATOMIC_RELEASE);
        } else if (now >= give_up) {
            break;
        }
        rx_yield();
    }
    if (give_up != 0)
        __atomic_store_n(&e->drive_wanted, 0, __ATOMIC_RELEASE);
    return claimed;
}

/* Hand the loop back: to the loop thread if anything is left to do, else leave it parked (woken
 * only if curl now wants a timer call before the parked thread planned to look). */
static void release_driver(rx_engine *e)
{
    rx_mutex_lock(&e->lock);
    if (e->running > 0 || e->queue_head != NULL || e->closing) {
        e->driver = LOOP_THREAD;
        rx_cond_signal(&e->unparked);
    } else {
        e->driver = NOBODY;
        if (e->curl_timer_us >= 0 && (e->park_until_us < 0 || e->curl_timer_us < e->park_until_us))
            rx_cond_signal(&e->unparked);
    }
    rx_mutex_unlock(&e->lock);
}

/* The caller's wait between two turns of the loop body: spin on the poller until spin_until_us
 * (the adaptive budget of spin.h, counted from the start of the drive, so a slow server costs
 * no spinning), then sleep in it; a signal for this thread ends the drive (EINTR), so the
 * caller gets back to Python's signal handlers. Returns the number of events, or -1 to stop
 * driving (a signal, or the budget is spent). */
static int drive_wait(rx_engine *e, rx_poll_event *events, int64_t spin_until_us,
                      int64_t until_us, int *slept)
{
    int timeout = rx_next_wait_ms(e);
    if (timeout == 0)
        return 0; /* curl's timer (or a deadline) is due: the loop body runs it */
    int64_t now = rx_clock_us();
    if (now < spin_until_us) {
        int n = rx_poll_until(e, events, spin_until_us < until_us ? spin_until_us : until_us, 0);
        if (n != 0)
            return n;
        now = rx_clock_us();
        timeout = rx_next_wait_ms(e);
    }
    if (now >= until_us)
        return -1;
    int budget_ms = (int)((until_us - now + 999) / 1000);
    if (timeout < 0 || timeout > budget_ms)
        timeout = budget_ms;
    *slept = 1;
    int n = rx_poller_wait(e->poller, events, MAX_EVENTS, timeout);
    return n < 0 ? -1 : n;
}

int rx_engine_drive(rx_engine *e, rx_transfer *t, long budget_ms)
{
    __atomic_add_fetch(&e->blocking_callers, 1, __ATOMIC_RELAXED);
    if (!claim_driver(e))
        return 0;
    /* Unlike the loop thread, the caller does not block signals: two more system calls per
     * request, for nothing. A resolver thread libcurl starts from here may then receive a
     * process signal; CPython's handler only flags it for the main thread, which sees it at
     * its next wait slice (SIGNAL_CHECK_MS) at the latest, as it would from any thread. */
    int64_t now = rx_clock_us();
    int64_t until_us = now + (int64_t)budget_ms * 1000;
    int probe, slept = 0;
    int64_t spin_until_us = now + rx_spin_budget_us(&e->spin, &probe);
    t->wait.started_us = now;
    rx_poll_event events[MAX_EVENTS];

    rx_transfer_ref(t); /* the engine's reference, as rx_engine_submit takes */
    rx_transfer_submit(t);
    rx_loop_now_ms = rx_clock_ms();
    rx_stat_add(&e->driven, 1);
    rx_start_transfer(e, t);
    while (!rx_transfer_is_delivered(t) && !__atomic_load_n(&e->closing, __ATOMIC_ACQUIRE)) {
        int n = drive_wait(e, events, spin_until_us, until_us, &slept);
        if (n < 0)
            break;
        rx_run_loop_body(e, events, n);
    }
    if (rx_transfer_is_delivered(t)) /* else the wait that follows records it */
        rx_spin_record(&e->spin, t, slept ? RX_WAIT_SLEPT : RX_WAIT_SPUN, probe);
    release_driver(e);
    return 1;
}

/* Blocking waiters spin briefly before they sleep (spin.h); the engine keeps their estimate. */
int rx_engine_spin_wait(rx_engine *e, rx_transfer *t) { return rx_spin_wait(&e->spin, t); }

void rx_engine_collected(rx_engine *e, rx_transfer *t) { rx_spin_collected(&e->spin, t); }

void rx_engine_drive_end(rx_engine *e)
{
    __atomic_sub_fetch(&e->blocking_callers, 1, __ATOMIC_RELAXED);
}
