/* The engine's inside, shared by the three files that make it up (the public side is engine.h):
 *
 *   engine.c     the loop thread, libcurl's socket and timer callbacks, starting, finishing and
 *                delivering transfers, the engine's life cycle
 *   commands.c   the command queue (any thread) and its taking by the driver
 *   drive.c      blocking callers that drive an idle engine (caller's thread, GIL released)
 *
 * Included only by those three. The functions below are what each of them calls in another.
 */
#ifndef RX_ENGINE_IMPL_H
#define RX_ENGINE_IMPL_H

#include <stdint.h>

#include <curl/curl.h>

#include "admission.h"
#include "deadlines.h"
#include "easy_pool.h"
#include "engine.h"
#include "platform.h"
#include "sockets.h"
#include "spin.h"
#include "thread.h"
#include "transfer_impl.h"

enum { RX_CMD_SUBMIT = 1, RX_CMD_CANCEL = 2, RX_CMD_RESUME = 3 };
enum { MAX_EVENTS = 64 };

struct rx_engine {
    /* Shared with other threads: guarded by `lock`. */
    rx_mutex lock;
    rx_command *queue_head, *queue_tail;
    int wake_owed;           /* deferred commands queued since the last wake-up or take */
    int closing;             /* no new submits; the loop exits once it sees it */
    int stuck;               /* close timed out: the loop thread still runs, never free */
    int driver;              /* who runs the loop body now: LOOP_THREAD, NOBODY or CALLER */
    rx_cond unparked;        /* the parked loop thread waits on it (with `lock`) */
    int64_t park_until_us;   /* when the parked loop thread wakes by itself, -1 = never */
    int drive_wanted;        /* atomic: a blocking caller asks the lingering loop to park */
    int blocking_callers;    /* atomic: threads between rx_engine_drive and rx_engine_drive_end */

    /* Fixed after start. */
    rx_poller *poller;       /* the sockets libcurl watches, and `wake` (platform.h) */
    rx_notifier wake;        /* raised on the queue's empty -> non-empty edge */
    rx_thread thread;
    int thread_started;

    /* Loop thread only. */
    CURLM *multi;
    CURLSH *share;
    rx_admission admission;  /* started transfers waiting their turn (admission.h) */
    int64_t curl_timer_us;   /* absolute time curl wants a timeout call, -1 = none */
    rx_transfer *active;     /* started transfers, linked through their `engine` sub-struct */
    rx_deadlines deadlines;  /* transfers with a timeout armed, earliest first */
    rx_easy_pool easy_pool;  /* idle easy handles (easy_pool.h) */
    long keepalive_expiry_s; /* applied to each easy handle as CURLOPT_MAXAGE_CONN; < 0 = default */
    int forbid_reuse;        /* max_keepalive == 0: close each connection after its transfer */
    int64_t stale_timer_backoff_us; /* see the CURL_SOCKET_TIMEOUT call in rx_run_loop_body() */
    rx_sockets sockets;      /* the sockets curl watches, and their registrations */
    int64_t busy_until_us;   /* see wait_for_events() */
    rx_spin event_waits;     /* its waits for an event while transfers are in flight */

    rx_spin spin;            /* blocking waiters' spin heuristics (any thread, spin.h) */
    long completed_at_give_back; /* `completed` when the parked loop thread last gave the
                                    engine heap's pages back (engine.c, park) */

    /* Statistics, also used by the driver (running): written by whoever drives,
     * with relaxed atomic stores so that rx_engine_get_stats() may read them from any thread. */
    long running, completed, wakeups, sleeps, driven, taken_spinning;
};

/* Who runs the loop body (the code between two waits of the poller) and so may touch libcurl and
 * the "loop thread only" fields above. Changed only under `lock`, which is what hands those fields
 * from one thread to the next. See "Blocking callers drive an idle engine" in engine.h. */
enum { LOOP_THREAD = 0, NOBODY = 1 /* the loop thread is parked */, CALLER = 2 };

/* ---- engine.c ---- */

/* Start a submitted transfer: an easy handle, deadlines, admission (loop thread or driver). */
void rx_start_transfer(rx_engine *e, rx_transfer *t);
/* Run a cancel command: fail the transfer if it started; drop the command's reference. */
void rx_cancel_transfer(rx_engine *e, rx_transfer *t);
/* Run a resume command: unpause the transfer if it started; drop the command's reference. */
void rx_resume_transfer(rx_transfer *t);
/* How long the driver may wait in the poller: curl's timer or the first deadline, -1 = none. */
int rx_next_wait_ms(rx_engine *e);
/* Look at the poller without sleeping until until_us (see engine.c). */
int rx_poll_until(rx_engine *e, rx_poll_event *events, int64_t until_us, int stop_for_work);
/* One turn of the loop body, after a wait that returned `n` events (see engine.c). */
void rx_run_loop_body(rx_engine *e, rx_poll_event *events, int n);

/* ---- commands.c ---- */

/* Wake the loop thread: it clears `wake` before it takes the queue (rx_run_commands). */
void rx_wake_loop_thread(rx_engine *e);
/* Every queued command, oldest first: the queue is empty afterwards. */
rx_command *rx_take_commands(rx_engine *e);
/* Take the queue and run its commands (the driver). */
void rx_run_commands(rx_engine *e);
/* Commands queued (a hint, read without the lock). */
int rx_commands_waiting(rx_engine *e);

#endif
