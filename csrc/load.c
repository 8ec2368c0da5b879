/* A load run (see load.h). */
#include "load.h"
#include "heap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "thread.h"

struct rx_load {
    rx_engine *engine;
    rx_transfer *request;    /* the template (a reference), never submitted itself */
    rx_mutex lock;           /* guards everything below: the loop thread and the caller */
    rx_cond finished_cond;
    int concurrency;
    long budget;             /* copies still to start; < 0: no count limit */
    int64_t until_us;        /* no copy starts after this (rx_clock_us); < 0: no time limit */
    int stopping;            /* rx_load_stop, or the engine is closing */
    long in_flight;          /* copies started and not yet recorded */
    int finished;            /* in_flight reached 0 after the start */
    rx_load_results results;
    int64_t *latencies;
    long latencies_cap;
};

rx_load *rx_load_new(rx_engine *e, rx_transfer *request, int concurrency, long requests,
                     long duration_ms)
{
    rx_load *l = rx_calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->engine = e;
    rx_transfer_ref(request);
    l->request = request;
    l->concurrency = concurrency > 0 ? concurrency : 1;
    l->budget = requests > 0 ? requests : -1;
    l->until_us = duration_ms > 0 ? rx_clock_us() + (int64_t)duration_ms * 1000 : -1;
    rx_mutex_init(&l->lock);
    rx_cond_init(&l->finished_cond);
    return l;
}

/* Under the lock. */
static void record_error(rx_load *l, int code, const char *text)
{
    rx_load_results *r = &l->results;
    if (r->errors++ == 0 && text != NULL)
        snprintf(r->first_error_text, sizeof r->first_error_text, "%s", text);
    int i = 0;
    while (i < r->error_kinds && r->error_codes[i] != code)
        i++;
    if (i == r->error_kinds) {
        if (r->error_kinds == (int)(sizeof r->error_codes / sizeof *r->error_codes))
            i--; /* the 33rd distinct code and beyond share the last entry */
        else
            r->error_codes[r->error_kinds++] = code;
    }
    r->error_counts[i]++;
}

/* Under the lock. */
static void record_response(rx_load *l, const rx_transfer *t, const rx_response *response)
{
    rx_load_results *r = &l->results;
    if (r->completed == l->latencies_cap) {
        long cap = l->latencies_cap ? l->latencies_cap * 2 : 4096;
        int64_t *grown = rx_realloc(l->latencies, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            record_error(l, RX_E_NOMEM, "out of memory recording latencies");
            return;
        }
        l->latencies = grown;
        l->latencies_cap = cap;
    }
    l->latencies[r->completed++] = rx_transfer_load_latency_us(t);
    if (response->status < 200 || response->status >= 400)
        r->non_2xx_3xx++;
    r->bytes += (int64_t)response->headers.len + response->body_received;
}

/* Under the lock: one copy has ended (or could not start); wake the caller after the last. */
static void copy_ended(rx_load *l)
{
    if (--l->in_flight == 0) {
        l->finished = 1;
        rx_cond_broadcast(&l->finished_cond);
    }
}

/* Under the lock: whether another copy may start now; if so it is counted as in flight. */
static int claim_next(rx_load *l)
{
    if (l->stopping || l->budget == 0 || (l->until_us >= 0 && rx_clock_us() >= l->until_us))
        return 0;
    if (l->budget > 0)
        l->budget--;
    l->in_flight++;
    return 1;
}

static void on_copy_delivered(rx_transfer *t, void *arg);

/* Start one copy that claim_next() counted already: 0, or the code it failed with (recorded
 * as that copy's error). */
static int start_copy(rx_load *l)
{
    rx_transfer *t = rx_transfer_load_copy(l->request, on_copy_delivered, l);
    int rc = RX_E_NOMEM;
    if (t != NULL) {
        rc = rx_engine_submit(l->engine, t);
        if (rc == 0)
            return 0;
        rx_transfer_unref(t);
    }
    rx_mutex_lock(&l->lock);
    record_error(l, rc, rc == RX_E_NOMEM ? "out of memory starting a request"
                                         : "the engine was closed");
    l->stopping = 1; /* the next copy would fail the same way */
    copy_ended(l);
    rx_mutex_unlock(&l->lock);
    return rc;
}

/* The loop thread (or a caller driving it), as each copy is delivered: record it, start the
 * next one. The engine still holds its own reference; ours, the creator's, goes here. */
static void on_copy_delivered(rx_transfer *t, void *arg)
{
    rx_load *l = arg;
    const rx_response *response = rx_transfer_response(t);
    rx_mutex_lock(&l->lock);
    if (response->error != 0) {
        record_error(l, response->error, response->error_text);
        if (response->error == RX_E_ENGINE_CLOSED)
            l->stopping = 1;
    } else {
        record_response(l, t, response);
    }
    int next = claim_next(l);
    copy_ended(l);
    rx_mutex_unlock(&l->lock);
    rx_transfer_unref(t);
    if (next)
        start_copy(l);
}

int rx_load_start(rx_load *l)
{
    rx_mutex_lock(&l->lock);
    l->in_flight = 1; /* held until every first copy has been started: see below */
    long first = 0;
    while (first < l->concurrency && claim_next(l))
        first++;
    rx_mutex_unlock(&l->lock);
    int rc = 0;
    long failed = 0;
    for (long i = 0; i < first; i++) {
        int copy_rc = start_copy(l);
        if (copy_rc != 0) {
            rc = copy_rc;
            failed++;
        }
    }
    rx_mutex_lock(&l->lock);
    copy_ended(l); /* the hold: a quick first copy cannot finish the run before the others */
    rx_mutex_unlock(&l->lock);
    return failed == first && first > 0 ? rc : 0;
}

int rx_load_wait(rx_load *l, long timeout_ms)
{
    int64_t deadline_us = rx_clock_deadline_us(timeout_ms);
    rx_mutex_lock(&l->lock);
    int timed_out = 0;
    while (!l->finished && !timed_out)
        timed_out = rx_cond_wait_until(&l->finished_cond, &l->lock, deadline_us);
    int finished = l->finished;
    rx_mutex_unlock(&l->lock);
    return finished ? 0 : ETIMEDOUT;
}

void rx_load_stop(rx_load *l)
{
    rx_mutex_lock(&l->lock);
    l->stopping = 1;
    rx_mutex_unlock(&l->lock);
}

void rx_load_results_of(const rx_load *l, rx_load_results *out)
{
    *out = l->results;
    out->latencies_us = l->latencies;
}

void rx_load_free(rx_load *l)
{
    if (l == NULL)
        return;
    rx_transfer_unref(l->request);
    rx_free(l->latencies);
    rx_cond_destroy(&l->finished_cond);
    rx_mutex_destroy(&l->lock);
    rx_free(l);
}
