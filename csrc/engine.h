/* The engine: one loop thread that owns a libcurl multi handle (= one connection pool).
 *
 * Threads
 * -------
 * Any thread may call rx_engine_submit() and rx_engine_cancel(): they push a command onto a
 * mutex-protected queue and raise the engine's wake-up notifier only when the queue goes from
 * empty to non-empty. Only the loop thread ever calls libcurl's multi or easy functions. The loop
 * waits on the platform's poller (platform.h: epoll on Linux) and drives libcurl with
 * curl_multi_socket_action(), so a wake-up touches only the sockets that fired. The loop thread
 * blocks every async signal, so SIGINT always reaches Python.
 *
 * Blocking callers drive an idle engine
 * -------------------------------------
 * "Only the loop thread calls libcurl" is, precisely, "only the engine's current driver does".
 * With nothing in flight, the loop thread parks (after a linger of a few hundred microseconds
 * that keeps an event loop's next request cheap). A blocking caller that finds it parked
 * becomes the driver (rx_engine_drive): it starts its own transfer and runs the loop body
 * itself until that transfer is done, so a lone blocking request costs no wake-up of another
 * thread and no second spinning CPU. Requests submitted meanwhile are started by that caller;
 * when it is done it hands the loop back to the loop thread if anything is left. The role
 * changes hands only under the engine's mutex, which orders everything the drivers touch.
 */
#ifndef RX_ENGINE_H
#define RX_ENGINE_H

#include "transfer.h"

typedef struct rx_engine rx_engine;

typedef struct rx_limits {
    long max_connections;      /* 0 = unlimited */
    long max_keepalive;        /* idle connections kept (engine.c); 0 = no reuse; < 0 = default */
    long keepalive_expiry_s;   /* idle connections older than this are closed; < 0 = default */
} rx_limits;

/* libcurl's global initialisation, once per process before the first engine (at import):
 * curl_global_init(CURL_GLOBAL_ALL), with libcurl's and the linked OpenSSL's allocations
 * taken from the engine's heap (heap.h). 0, or libcurl's error code. */
int rx_engine_global_init(void);

/* Start an engine and its loop thread. On failure returns NULL and writes a reason to err. */
rx_engine *rx_engine_new(const rx_limits *limits, char *err, size_t err_len);

/* Hand a transfer to the loop thread (the engine takes a reference). Returns 0, or
 * RX_E_ENGINE_CLOSED once rx_engine_close() has begun. */
int rx_engine_submit(rx_engine *e, rx_transfer *t);

/* rx_engine_submit() without waking the loop thread: the wake-up is owed until
 * rx_engine_flush(), so that a burst of submits from one event-loop turn costs the loop thread
 * one wake-up. The loop thread also takes the queue whenever something else wakes it. A caller
 * that defers must flush soon after (before it waits for the transfer). */
int rx_engine_submit_deferred(rx_engine *e, rx_transfer *t);

/* Pay the wake-up owed by rx_engine_submit_deferred(), if the loop thread has not taken the
 * deferred commands meanwhile. Any thread. */
void rx_engine_flush(rx_engine *e);

/* Ask the loop thread to stop a transfer; it completes with RX_E_CANCELLED unless it has finished
 * already. Safe to call more than once and after completion. */
void rx_engine_cancel(rx_engine *e, rx_transfer *t);

/* Let a streaming transfer paused by its full buffer go on (after rx_stream_take() said so). */
void rx_engine_resume(rx_engine *e, rx_transfer *t);

/* A blocking caller, instead of rx_engine_submit(): if the engine is idle and no other blocking
 * caller is between these two calls, become its driver, start `t` and run the loop in this
 * thread until `t` is done, a signal arrives or budget_ms have passed, then hand the loop back.
 * Returns 1 if `t` was taken (done, or still running: wait for it as after a submit), 0 if the
 * engine was busy or closing (submit as usual). Either way, call rx_engine_drive_end() once
 * the wait for `t` is over. */
int rx_engine_drive(rx_engine *e, rx_transfer *t, long budget_ms);
void rx_engine_drive_end(rx_engine *e);

/* For a blocking waiter, before it sleeps on the transfer's latch: spin for a few tens of
 * microseconds in case the transfer is about to finish. Returns 1 if it finished, else 0. See
 * spin.h. */
int rx_engine_spin_wait(rx_engine *e, rx_transfer *t);

/* A waiter collected the transfer after a wait that did not end in rx_engine_spin_wait (it
 * slept, or an event loop drained it): the wait's duration feeds the spin heuristic. */
void rx_engine_collected(rx_engine *e, rx_transfer *t);

/* Stop the loop: running and queued transfers complete with RX_E_ENGINE_CLOSED, the thread is
 * joined (for at most timeout_ms) and libcurl's handles are cleaned up. The struct stays valid,
 * so submits racing with close fail cleanly with RX_E_ENGINE_CLOSED; rx_engine_free() releases
 * it once no thread can call in any more. Idempotent. Returns -1 if the thread did not stop in
 * time: its resources are then leaked rather than freed under its feet. */
int rx_engine_close(rx_engine *e, long timeout_ms);

/* Release a closed engine's memory (closing it first if needed). */
void rx_engine_free(rx_engine *e);

/* In a child after fork(): the loop thread does not exist there. Close our descriptors and leak
 * the curl structures on purpose (cleaning them up would talk on the parent's connections). */
void rx_engine_abandon(rx_engine *e);

/* Counters for tests and debugging (read without locking: approximate while running). */
typedef struct rx_engine_stats {
    long running;     /* transfers attached to the multi handle */
    long completed;   /* transfers completed since start */
    long wakeups;     /* turns of the loop body (the poller returned), whoever drove */
    long sleeps;      /* waits that could block (the loop thread slept or parked) */
    long easy_pooled; /* idle easy handles kept for reuse */
    long driven;      /* transfers a blocking caller started and drove itself */
    long taken_spinning; /* times the spinning loop thread took queued commands unwoken */
    long poller_changes; /* registration changes for the sockets libcurl watches (sockets.h) */
} rx_engine_stats;
void rx_engine_get_stats(rx_engine *e, rx_engine_stats *out);

/* libcurl easy handles alive in this process, pooled ones included (a debug aid: tests
 * assert it returns to zero once every engine is freed). */
long rx_engine_live_easy_handles(void);

#endif
