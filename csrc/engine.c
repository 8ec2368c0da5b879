/* The loop thread: the poller + curl_multi_socket_action, libcurl's callbacks, timeouts,
 * completions, and the engine's life cycle. The command queue is commands.c; callers that drive
 * an idle engine, drive.c. See engine.h for the threading contract and docs/architecture.md for
 * the picture. */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "clock.h"
#include "deadlines.h"
#include "easy_pool.h"
#include "engine_impl.h"
#include "heap.h"
#include "platform.h"
#include "sockets.h"
#include "spin.h"
#include "stat.h"
#include "thread.h"
#include "transfer_impl.h"

RX_THREAD_LOCAL int64_t rx_loop_now_ms;

long rx_engine_live_easy_handles(void) { return rx_easy_live_count(); }

/* ---------------------------------------------------------------------------------------------
 * Starting and ending transfers (loop thread).
 */

/* The list of started transfers, which shutdown walks. */
static void list_started(rx_engine *e, rx_transfer *t)
{
    t->engine.next = e->active;
    if (e->active)
        e->active->engine.prev = t;
    e->active = t;
}

static void unlist_started(rx_engine *e, rx_transfer *t)
{
    if (t->engine.prev)
        t->engine.prev->engine.next = t->engine.next;
    else
        e->active = t->engine.next;
    if (t->engine.next)
        t->engine.next->engine.prev = t->engine.prev;
    t->engine.prev = t->engine.next = NULL;
}

/* Deliver a finished transfer and drop the engine's reference. */
static void deliver_transfer(rx_transfer *t)
{
    rx_transfer_deliver(t);
    rx_transfer_unref(t); /* the engine's reference */
}

/* Finish a started transfer whose verdict is in (rx_transfer_set_result or _set_error): off
 * the engine's lists and libcurl, its easy handle recycled; then deliver it at once. */
static void finish_transfer(rx_engine *e, rx_transfer *t)
{
    rx_deadlines_remove(&e->deadlines, t);
    rx_admission_leave(&e->admission, t);
    unlist_started(e, t);

    /* Recycle the easy handle at once: the next submit reuses it (easy_pool.h). */
    curl_multi_remove_handle(e->multi, rx_transfer_easy(t));
    rx_easy_pool_give(&e->easy_pool, rx_transfer_finish(t), t);
    rx_stat_add(&e->running, -1);
    rx_stat_add(&e->completed, 1);
    deliver_transfer(t);
}

/* Finish a transfer the engine could not start (closing, out of memory), and deliver it. */
static void finish_unstarted(rx_transfer *t, int error, const char *text)
{
    rx_transfer_set_error(t, error, text);
    rx_transfer_finish(t);
    deliver_transfer(t);
}

/* Hand a prepared transfer to libcurl. */
static void attach_transfer(rx_engine *e, rx_transfer *t)
{
    CURLMcode mc = curl_multi_add_handle(e->multi, rx_transfer_easy(t));
    if (mc != CURLM_OK) {
        rx_transfer_set_error(t, RX_E_NOMEM, curl_multi_strerror(mc));
        finish_transfer(e, t);
    }
}

/* What admission answered for a started transfer (admission.h): attach it, or fail it; one
 * that waits is attached when its turn comes (admit_waiting). */
static void admitted(rx_engine *e, rx_transfer *t, int admission)
{
    if (admission == RX_ADMIT_NOW) {
        attach_transfer(e, t);
    } else if (admission == RX_ADMIT_NOMEM) {
        rx_transfer_set_error(t, RX_E_NOMEM, "out of memory admitting a transfer");
        finish_transfer(e, t);
    }
}

/* Transfers whose wait for a stream or a connection is over (those that ended made room). */
static void admit_waiting(rx_engine *e)
{
    rx_transfer *t;
    int admission;
    while ((t = rx_admission_next(&e->admission, &admission)) != NULL)
        admitted(e, t, admission);
}

/* Every connection socket is opened and closed here (data: the handle of the transfer that
 * connects, and the engine, since a connection may close long after that transfer), so that
 * the engine hears of every close (sockets.h: a parked socket's number may come back as
 * another socket) and HTTP/2 origins can refuse a second connection (origin.h). */
static curl_socket_t on_open_socket(void *easy, curlsocktype purpose,
                                    struct curl_sockaddr *address)
{
    rx_transfer *t = rx_easy_data_transfer(easy);
    rx_engine *e = t->engine.owner;
    if (!rx_admission_may_open_socket(t))
        return CURL_SOCKET_BAD;
    curl_socket_t fd = rx_socket_open(address->family, address->socktype, address->protocol);
    if (fd == CURL_SOCKET_BAD)
        return fd;
    if (rx_admission_socket_opened(t, fd) != 0) {
        rx_socket_close(fd);
        return CURL_SOCKET_BAD;
    }
    rx_sockets_opened(&e->sockets, fd);
    return fd;
}

static int on_close_socket(void *engine, curl_socket_t fd)
{
    rx_engine *e = engine;
    rx_sockets_closing(&e->sockets, fd);
    rx_admission_socket_closing(&e->admission, fd);
    return rx_socket_close(fd);
}

/* The engine's options of every easy handle its pool makes and of every reset one:
 * its socket callbacks (whose data is the handle, and the engine) and connection limits. */
static int prepare_easy(rx_easy *x, void *engine)
{
    rx_engine *e = engine;
    CURL *h = x->curl;
    int failed = curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open_socket) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, x) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, e) != CURLE_OK;
    if (!failed && e->keepalive_expiry_s >= 0)
        failed = curl_easy_setopt(h, CURLOPT_MAXAGE_CONN, e->keepalive_expiry_s) != CURLE_OK;
    if (!failed && e->forbid_reuse)
        failed = curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L) != CURLE_OK;
    return failed;
}

void rx_start_transfer(rx_engine *e, rx_transfer *t)
{
    int kept;
    rx_easy *h = rx_easy_pool_take(&e->easy_pool, t, &kept);
    if (h == NULL) {
        finish_unstarted(t, RX_E_NOMEM, "out of memory creating a transfer");
        return;
    }
    if (rx_transfer_start(t, h, e->share, kept) != 0) {
        rx_easy_pool_discard(&e->easy_pool, h);
        finish_unstarted(t, RX_E_NOMEM, "out of memory configuring a transfer");
        return;
    }
    t->engine.owner = e;
    list_started(e, t);
    rx_stat_add(&e->running, 1);
    int64_t first = rx_timeout_first(t);
    if (first >= 0) {
        if (rx_deadlines_add(&e->deadlines, t, first) != 0) {
            rx_transfer_set_error(t, RX_E_NOMEM, "out of memory arming a timeout");
            finish_transfer(e, t);
            return;
        }
    }
    admitted(e, t, rx_admission_enter(&e->admission, t));
}

void rx_resume_transfer(rx_transfer *t)
{
    /* Cleared before resuming: a pause during curl_easy_pause() may queue the next resume. */
    __atomic_store_n(&t->commands.resume_queued, 0, __ATOMIC_RELEASE);
    if (rx_transfer_is_started(t))
        rx_transfer_unpause(t);
    rx_transfer_unref(t); /* the resume command's reference */
}

void rx_cancel_transfer(rx_engine *e, rx_transfer *t)
{
    if (rx_transfer_is_started(t)) {
        rx_transfer_set_error(t, RX_E_CANCELLED, "request cancelled");
        finish_transfer(e, t);
    }
    rx_transfer_unref(t); /* the cancel command's reference */
}

/* ---------------------------------------------------------------------------------------------
 * libcurl's socket and timer callbacks (loop thread, from inside curl_multi_* calls).
 */

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    rx_engine *e = userp;
    if (what == CURL_POLL_REMOVE) {
        rx_sockets_unwatch(&e->sockets, fd);
        return 0;
    }
    unsigned events =
        ((what & CURL_POLL_IN) ? RX_POLL_IN : 0u) | ((what & CURL_POLL_OUT) ? RX_POLL_OUT : 0u);
    /* On failure libcurl fails the transfers on this socket: we would never be woken for it. */
    if (rx_sockets_watch(&e->sockets, fd, events) != 0)
        return -1;
    /* Every easy handle of ours carries its rx_easy as CURLOPT_PRIVATE. A descriptor watched
     * for none of them is watched for libcurl's own admin handle, which (libcurl 8.22,
     * multi.c) listens on its multi handle's wake-up descriptor, made with the multi and
     * closed with it: it can be parked (sockets.h). Sockets of connections being shut down
     * are the admin's too, but those are connections, parked or not already. Asked only of
     * descriptors not known to be parkable: a connection's (the common call) needs no
     * lookup. */
    rx_easy *owner = NULL;
    if (!rx_sockets_may_park(&e->sockets, fd) &&
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&owner) == CURLE_OK && owner == NULL)
        rx_sockets_lasting(&e->sockets, fd);
    return 0;
}

/* curl reports its next timeout relative to *its* clock, in whole ms rounded up. We keep it in
 * microseconds from a fresh reading so we never call curl early: a call before its timer is due
 * does nothing, and curl does not repeat a timer it has reported already. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    rx_engine *e = userp;
    e->curl_timer_us = timeout_ms < 0 ? -1 : rx_clock_us() + (int64_t)timeout_ms * 1000;
    e->stale_timer_backoff_us = 0;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The loop.
 */

/* Finish every transfer libcurl reports done, or begin it again (see below). */
static void finish_reported(rx_engine *e)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(e->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        rx_transfer *t = rx_easy_transfer_of(msg->easy_handle);
        if (t == NULL)
            continue; /* not one of ours (libcurl reports none for its own handle) */
        /* Two ways a transfer ends before anything of it was sent and begins again: the
         * server closed the pooled connection it was to use (it goes out at once on a new
         * one), or it was refused a second connection to an HTTP/2 origin (it waits for a
         * stream on the first, origin.h, and is attached again then). */
        int reconnect = rx_transfer_reconnect(t);
        if (reconnect || rx_admission_wait_again(&e->admission, t)) {
            curl_multi_remove_handle(e->multi, rx_transfer_easy(t));
            rx_transfer_begin_attempt(t);
            if (reconnect)
                attach_transfer(e, t);
            continue;
        }
        rx_transfer_set_result(t, msg->data.result);
        finish_transfer(e, t);
    }
}

/* The read timeout is per read, and bytes that complete no header line reach no callback (a
 * status line sent a byte at a time): so the loop notes when each socket was last readable
 * (rx_sockets_event), and a transfer whose deadline comes up hears about its socket first. */
static void tell_socket_activity(rx_engine *e, rx_transfer *t)
{
    curl_socket_t fd = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(rx_transfer_easy(t), CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK ||
        fd == CURL_SOCKET_BAD)
        return;
    int64_t readable_at_ms = rx_sockets_readable_at(&e->sockets, fd);
    if (readable_at_ms > 0)
        rx_timeout_bytes_arrived(t, readable_at_ms);
}

/* Transfers whose timeout ran out fail with it; the others get a later key (deadlines.h). */
static void expire_deadlines(rx_engine *e)
{
    rx_transfer *t;
    int64_t next;
    while ((t = rx_deadlines_due(&e->deadlines, rx_loop_now_ms)) != NULL) {
        tell_socket_activity(e, t);
        if (rx_timeout_check(t, rx_loop_now_ms, &next))
            finish_transfer(e, t);
        else
            rx_deadlines_rekey_first(&e->deadlines, next);
    }
}

int rx_next_wait_ms(rx_engine *e)
{
    int64_t wake_us = e->curl_timer_us;
    int64_t first_ms = rx_deadlines_first_key(&e->deadlines);
    if (first_ms >= 0) {
        int64_t heap_us = first_ms * 1000;
        if (wake_us < 0 || heap_us < wake_us)
            wake_us = heap_us;
    }
    if (wake_us < 0)
        return -1;
    int64_t wait_us = wake_us - rx_clock_us();
    if (wait_us <= 0)
        return 0;
    /* Round up: waking early for curl's timer would just spin once more. */
    int64_t wait_ms = (wait_us + 999) / 1000;
    return wait_ms > 60000 ? 60000 : (int)wait_ms;
}

static void shutdown_transfers(rx_engine *e)
{
    /* Queued commands first: submits never started, cancels only hold references. */
    rx_command *cmd = rx_take_commands(e);
    while (cmd != NULL) {
        rx_command *next = cmd->next;
        if (cmd->kind == RX_CMD_SUBMIT)
            finish_unstarted(cmd->transfer, RX_E_ENGINE_CLOSED, "the client has been closed");
        else
            rx_transfer_unref(cmd->transfer);
        cmd = next;
    }
    while (e->active != NULL) {
        rx_transfer *t = e->active;
        rx_transfer_set_error(t, RX_E_ENGINE_CLOSED, "the client was closed while the request ran");
        finish_transfer(e, t);
    }
}

/* Wait for socket or command events. Before sleeping (with more than one CPU), poll: with a
 * lone transfer in flight for as long as spin.h's budget for its waits says, and with nothing
 * in flight but some until a moment ago for up to LOOP_SPIN_US. On virtual
 * machines a sleep and wake-up of this thread costs more than a loopback round trip, so a
 * response that is microseconds away, or the next request of an event loop that keeps its
 * client busy, is picked up without one. With nothing in flight the loop does not sleep here:
 * it returns, and loop_main() parks it once the linger is over (or a blocking caller wants to
 * drive). */
enum { LOOP_SPIN_US = 50, LOOP_LINGER_US = 200 };

static int lingering(rx_engine *e)
{
    return e->spin.may_spin && rx_clock_us() < e->busy_until_us &&
           !__atomic_load_n(&e->drive_wanted, __ATOMIC_ACQUIRE);
}

/* Look at the poller without sleeping until until_us, yielding the CPU between looks rather than
 * only pausing: the thread whose work we wait for (a caller, the server) may share this CPU.
 * Returns the events (or -1), or 0 once the time is up; with stop_for_work (the loop thread's
 * spin), also 0 as soon as commands are queued or a blocking caller asks an idle loop thread
 * to park. */
int rx_poll_until(rx_engine *e, rx_poll_event *events, int64_t until_us, int stop_for_work)
{
    do {
        int n = rx_poller_wait(e->poller, events, MAX_EVENTS, 0);
        if (n != 0)
            return n;
        if (stop_for_work &&
            (rx_commands_waiting(e) ||
             (e->running == 0 && __atomic_load_n(&e->drive_wanted, __ATOMIC_ACQUIRE))))
            return 0;
        rx_yield();
    } while (rx_clock_us() < until_us);
    return 0;
}

/* While transfers are in flight the loop spins only for a lone transfer, and only while its
 * recent waits for an event were short (event_waits, the estimate spin.h keeps for blocking
 * waiters):
 *   - a lone transfer's next event is its answer, which a sleeping thread picks up one wake-up
 *     late;
 *   - with several in flight, events keep coming without a spin, and on a busy machine a spin
 *     takes the CPU from the threads that produce them (the event loop, the server): 64 async
 *     tasks on uvloop ran 46.9k requests/s with it and 51.2k without it (docs/performance.md);
 *   - a slow server would cost a spin per wait for nothing (186 us of CPU per async request to
 *     a server that answers in 1 ms, against 116 us for aiohttp).
 * Idle, it spins through its linger. */
static int wait_for_events(rx_engine *e, rx_poll_event *events)
{
    int timeout = rx_next_wait_ms(e);
    int64_t now = rx_clock_us(), started = now;
    int in_flight = e->running > 0, lone = e->running == 1;
    if (in_flight)
        e->busy_until_us = now + LOOP_LINGER_US;
    int spin_us = 0, probe = 0;
    if (timeout != 0 && now < e->busy_until_us && e->spin.may_spin)
        spin_us = !in_flight ? LOOP_SPIN_US : lone ? rx_spin_budget_us(&e->event_waits, &probe) : 0;
    if (spin_us > 0) {
        int n = rx_poll_until(e, events, now + spin_us, 1);
        if (n == 0 && rx_commands_waiting(e)) {
            /* Deferred submits (engine.h) owe no wake-up until their event loop's flush, but a
             * spinning loop thread takes them as they come: the spin ends at once, and the flush
             * finds nothing owed, so it raises no wake-up. */
            rx_stat_add(&e->taken_spinning, 1);
            rx_run_commands(e);
            return 0;
        }
        if (n != 0) {
            if (lone && n > 0)
                rx_spin_note(&e->event_waits, rx_clock_us() - started, RX_WAIT_SPUN, probe);
            return n;
        }
        timeout = rx_next_wait_ms(e);
    }
    if (!in_flight)
        return 0; /* idle: loop_main() lingers a little more or parks */
    if (timeout != 0)
        rx_stat_add(&e->sleeps, 1);
    int n = rx_poller_wait(e->poller, events, MAX_EVENTS, timeout);
    if (lone && n > 0)
        rx_spin_note(&e->event_waits, rx_clock_us() - started, RX_WAIT_SLEPT, probe);
    return n;
}

/* One turn of the loop body, after a wait that returned `n` events: whichever thread drives
 * (the loop thread, or a blocking caller in rx_engine_drive) runs exactly this. */
void rx_run_loop_body(rx_engine *e, rx_poll_event *events, int n)
{
    int still_running = 0;
    rx_loop_now_ms = rx_clock_ms();
    rx_stat_add(&e->wakeups, 1);
    for (int i = 0; i < n; i++) {
        rx_socket_t fd = events[i].fd;
        if (fd == e->wake.read_end) {
            rx_run_commands(e);
            continue;
        }
        unsigned ev = events[i].events;
        if (rx_sockets_event(&e->sockets, fd, ev, rx_loop_now_ms))
            continue; /* a parked socket: no transfer wants it */
        int flags = ((ev & RX_POLL_IN) ? CURL_CSELECT_IN : 0) |
                    ((ev & RX_POLL_OUT) ? CURL_CSELECT_OUT : 0) |
                    ((ev & RX_POLL_ERR) ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action(e->multi, fd, flags, &still_running);
    }
    /* The timer stays armed through the call: curl re-arms or clears it by callback if the
     * call changed anything. If it did not (curl only reports a *changed* expiry, and a
     * call a fraction of a millisecond before its timer is due expires nothing), the timer
     * is still in the past: look again in a millisecond rather than spin on a zero wait. */
    if (e->curl_timer_us >= 0 && e->curl_timer_us <= rx_clock_us()) {
        int64_t due = e->curl_timer_us;
        curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &still_running);
        if (e->curl_timer_us == due) {
            /* 1 ms covers the rounding case; a timer that stays unchanged after that is
             * looked at less and less often (until curl reports a new one). */
            int64_t backoff = e->stale_timer_backoff_us;
            backoff = backoff == 0 ? 1000 : (backoff * 2 > 200000 ? 200000 : backoff * 2);
            e->stale_timer_backoff_us = backoff;
            e->curl_timer_us = rx_clock_us() + backoff;
        }
    }
    finish_reported(e);
    expire_deadlines(e);
    admit_waiting(e);
}

/* The loop thread, with nothing in flight: give up driving and sleep until a command arrives,
 * curl's timer is due or a caller that drove hands the loop back with work left. Nobody waits
 * on the poller meanwhile, so idle connections (parked, sockets.h) are not watched; libcurl
 * checks a pooled connection before it reuses it. A second into the sleep, if transfers ran
 * since it last did, it gives the engine heap's unused pages back (heap.h): a service that
 * goes quiet after a burst returns the burst's memory, and a busy engine, which never sleeps
 * that long, pays nothing. Returns 1 when the engine is closing (and no caller drives any
 * more). */
enum { IDLE_GIVE_BACK_US = 1000000 };

static int park(rx_engine *e)
{
    rx_mutex_lock(&e->lock);
    if (e->queue_head == NULL && !e->closing) {
        e->driver = NOBODY;
        rx_stat_add(&e->sleeps, 1);
        int64_t give_back_at = -1;
        while (e->driver != LOOP_THREAD) {
            if (e->driver == CALLER) { /* it hands the loop back before anything else */
                rx_cond_wait_until(&e->unparked, &e->lock, -1);
                continue;
            }
            if (e->closing)
                break;
            /* Fields a caller changed while it drove are ours again: the mutex orders them. */
            int64_t now = rx_clock_us();
            if (give_back_at < 0 && e->completed != e->completed_at_give_back)
                give_back_at = now + IDLE_GIVE_BACK_US;
            if (give_back_at >= 0 && now >= give_back_at) {
                e->completed_at_give_back = e->completed;
                give_back_at = -1;
                rx_mutex_unlock(&e->lock); /* a caller may drive meanwhile: the loop is NOBODY's */
                rx_heap_give_back();
                rx_mutex_lock(&e->lock);
                continue;
            }
            e->park_until_us = e->curl_timer_us;
            if (e->park_until_us >= 0 && e->park_until_us <= now)
                break; /* curl's timer is due */
            int64_t until = e->park_until_us;
            if (give_back_at >= 0 && (until < 0 || give_back_at < until))
                until = give_back_at;
            rx_cond_wait_until(&e->unparked, &e->lock, until);
        }
        e->driver = LOOP_THREAD;
    }
    int closing = e->closing;
    rx_mutex_unlock(&e->lock);
    __atomic_store_n(&e->drive_wanted, 0, __ATOMIC_RELEASE);
    return closing;
}

static void loop_main(void *arg)
{
    rx_engine *e = arg;
    rx_poll_event events[MAX_EVENTS];
    for (;;) {
        int n;
        if (e->running == 0 && !lingering(e)) {
            if (park(e))
                break;
            /* What woke us may be a command whose wake-up is still to come (push_command,
             * commands.c, raises it after unlocking): take the queue now rather than wait for
             * the wake-up. Otherwise the loop would find the queue full, not park, and see no
             * event, until that write, turning over hundreds of times (measured: 700 turns per
             * request). */
            rx_loop_now_ms = rx_clock_ms(); /* deadlines start from it; it is stale after a park */
            rx_run_commands(e);
            n = rx_poller_wait(e->poller, events, MAX_EVENTS, 0);
        } else {
            n = wait_for_events(e, events);
        }
        rx_run_loop_body(e, events, n);
        if (__atomic_load_n(&e->closing, __ATOMIC_ACQUIRE))
            break;
    }
    shutdown_transfers(e);
}

/* ---------------------------------------------------------------------------------------------
 * Life cycle (caller's thread).
 */

static void free_curl(rx_engine *e)
{
    if (e->multi)
        curl_multi_cleanup(e->multi);
    rx_easy_pool_free(&e->easy_pool);
    if (e->share)
        curl_share_cleanup(e->share);
    rx_admission_free(&e->admission); /* after the multi: closing connections reports to it */
}

static void close_fds(rx_engine *e)
{
    rx_poller_free(e->poller);
    e->poller = NULL;
    rx_notifier_close(&e->wake); /* nothing to close when it was never opened */
}

int rx_engine_global_init(void)
{
    rx_heap_take_openssl(); /* first: before libcurl's initialisation reaches OpenSSL */
    return (int)curl_global_init_mem(CURL_GLOBAL_ALL, rx_malloc, rx_free, rx_realloc, rx_strdup,
                                     rx_calloc);
}

rx_engine *rx_engine_new(const rx_limits *limits, char *err, size_t err_len)
{
    rx_engine *e = rx_calloc(1, sizeof *e);
    if (e == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    e->wake.read_end = e->wake.write_end = RX_SOCKET_BAD;
    e->curl_timer_us = -1;
    rx_easy_pool_init(&e->easy_pool, prepare_easy, e);
    rx_spin_init(&e->spin);
    rx_spin_init(&e->event_waits);
    rx_mutex_init(&e->lock);
    rx_cond_init(&e->unparked); /* park_until_us is rx_clock_us() time, as its waits are */
    e->park_until_us = -1;

    e->poller = rx_poller_new();
    if (e->poller == NULL || rx_notifier_open(&e->wake) != 0 ||
        rx_poller_set(e->poller, e->wake.read_end, RX_POLL_IN, 0) != 0) {
        snprintf(err, err_len, "cannot create the engine's descriptors (%s): %s",
                 rx_platform_name(), strerror(errno));
        goto fail;
    }
    rx_sockets_init(&e->sockets, e->poller);

    e->multi = curl_multi_init();
    e->share = curl_share_init();
    if (e->multi == NULL || e->share == NULL) {
        snprintf(err, err_len, "cannot create libcurl handles");
        goto fail;
    }
    /* Only the loop thread uses the share, so it needs no lock callbacks. */
    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);

    curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    /* Streams per HTTP/2 connection until the server says otherwise (its SETTINGS win). */
    curl_multi_setopt(e->multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    if (limits->max_connections > 0) {
        curl_multi_setopt(e->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits->max_connections);
        curl_multi_setopt(e->multi, CURLMOPT_MAX_HOST_CONNECTIONS, limits->max_connections);
    }
    if (rx_admission_init(&e->admission, limits->max_connections) != 0) {
        snprintf(err, err_len, "out of memory");
        goto fail;
    }
    /* httpx's max_keepalive_connections caps *idle* connections. libcurl's MAXCONNECTS caps
     * the whole connection cache, in use or not, and when a busy client exceeds it, curl
     * closes a connection as it goes idle even though a queued transfer is about to need it:
     * with httpx's defaults (100 / 20) and 256 tasks, connections churned and throughput fell
     * by two thirds. So the cache may hold every allowed connection; idle ones still close
     * after keepalive_expiry. 0 (no keep-alive) forbids reuse outright, per transfer. */
    long cache = limits->max_keepalive;
    if (cache > 0 && limits->max_connections > cache)
        cache = limits->max_connections;
    if (cache > 0)
        curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, cache);
    e->forbid_reuse = limits->max_keepalive == 0;

    /* MAXAGE_CONN is an easy option in libcurl: rx_start_transfer() applies it to each transfer. */
    e->keepalive_expiry_s = limits->keepalive_expiry_s;

    /* The loop thread (and the resolver threads libcurl starts from it) must never receive async
     * signals: they belong to Python's main thread. */
    int rc = rx_thread_start(&e->thread, loop_main, e, 1);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start the engine thread: %s", strerror(rc));
        goto fail;
    }
    e->thread_started = 1;
    return e;

fail:
    free_curl(e);
    close_fds(e);
    rx_cond_destroy(&e->unparked);
    rx_mutex_destroy(&e->lock);
    rx_free(e);
    return NULL;
}

int rx_engine_close(rx_engine *e, long timeout_ms)
{
    rx_mutex_lock(&e->lock);
    int already = e->closing;
    __atomic_store_n(&e->closing, 1, __ATOMIC_RELEASE);
    rx_cond_signal(&e->unparked); /* a parked loop thread; a driving caller sees the wake */
    rx_mutex_unlock(&e->lock);
    if (already)
        return e->stuck ? -1 : 0;
    rx_wake_loop_thread(e); /* the loop sees `closing` after any wake */

    if (rx_thread_join(&e->thread, timeout_ms) != 0) {
        /* Stuck inside libcurl (a resolver that will not stop?). Freeing now would pull memory
         * from under a running thread: leak it instead. */
        e->stuck = 1;
        return -1;
    }
    free_curl(e);
    e->multi = NULL;
    e->share = NULL;
    close_fds(e);
    return 0;
}

void rx_engine_free(rx_engine *e)
{
    if (rx_engine_close(e, 2000) != 0)
        return; /* the loop thread may still touch it */
    rx_cond_destroy(&e->unparked);
    rx_mutex_destroy(&e->lock);
    rx_deadlines_free(&e->deadlines);
    rx_sockets_free(&e->sockets);
    rx_free(e);
}

void rx_engine_abandon(rx_engine *e)
{
    close_fds(e);
    /* multi, share, easy handles, the mutex and e itself are leaked on purpose. */
}

void rx_engine_get_stats(rx_engine *e, rx_engine_stats *out)
{
    out->running = __atomic_load_n(&e->running, __ATOMIC_RELAXED);
    out->completed = __atomic_load_n(&e->completed, __ATOMIC_RELAXED);
    out->wakeups = __atomic_load_n(&e->wakeups, __ATOMIC_RELAXED);
    out->sleeps = __atomic_load_n(&e->sleeps, __ATOMIC_RELAXED);
    out->easy_pooled = __atomic_load_n(&e->easy_pool.idle_count, __ATOMIC_RELAXED);
    out->driven = __atomic_load_n(&e->driven, __ATOMIC_RELAXED);
    out->taken_spinning = __atomic_load_n(&e->taken_spinning, __ATOMIC_RELAXED);
    out->poller_changes = __atomic_load_n(&e->sockets.changes, __ATOMIC_RELAXED);
}
