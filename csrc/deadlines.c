/* The engine's timeouts: a binary min-heap of transfers on engine.deadline_ms, and which
 * timeout applies to a transfer in each phase (see deadlines.h). */
#include "deadlines.h"
#include "heap.h"

#include <stdio.h>
#include <stdlib.h>

#include "transfer_impl.h"

static void heap_swap(rx_deadlines *e, long i, long j)
{
    rx_transfer *a = e->heap[i], *b = e->heap[j];
    e->heap[i] = b;
    e->heap[j] = a;
    b->engine.heap_slot = i + 1;
    a->engine.heap_slot = j + 1;
}

static int64_t key(const rx_deadlines *e, long i) { return e->heap[i]->engine.deadline_ms; }

static void heap_up(rx_deadlines *e, long i)
{
    while (i > 0) {
        long parent = (i - 1) / 2;
        if (key(e, parent) <= key(e, i))
            break;
        heap_swap(e, i, parent);
        i = parent;
    }
}

static void heap_down(rx_deadlines *e, long i)
{
    for (;;) {
        long l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->len && key(e, l) < key(e, m))
            m = l;
        if (r < e->len && key(e, r) < key(e, m))
            m = r;
        if (m == i)
            return;
        heap_swap(e, i, m);
        i = m;
    }
}

int rx_deadlines_add(rx_deadlines *e, rx_transfer *t, int64_t deadline_ms)
{
    if (e->len == e->cap) {
        long cap = e->cap ? e->cap * 2 : 64;
        rx_transfer **h = rx_realloc(e->heap, (size_t)cap * sizeof *h);
        if (h == NULL)
            return -1;
        e->heap = h;
        e->cap = cap;
    }
    t->engine.deadline_ms = deadline_ms;
    t->engine.heap_slot = e->len + 1;
    e->heap[e->len++] = t;
    heap_up(e, e->len - 1);
    return 0;
}

void rx_deadlines_remove(rx_deadlines *e, rx_transfer *t)
{
    long i = t->engine.heap_slot - 1;
    if (i < 0)
        return;
    t->engine.heap_slot = 0;
    e->len--;
    if (i == e->len)
        return;
    e->heap[i] = e->heap[e->len];
    e->heap[i]->engine.heap_slot = i + 1;
    heap_up(e, i);
    heap_down(e, e->heap[i]->engine.heap_slot - 1);
}

rx_transfer *rx_deadlines_due(const rx_deadlines *e, int64_t now_ms)
{
    return e->len > 0 && key(e, 0) <= now_ms ? e->heap[0] : NULL;
}

int64_t rx_deadlines_first_key(const rx_deadlines *e) { return e->len > 0 ? key(e, 0) : -1; }

void rx_deadlines_rekey_first(rx_deadlines *e, int64_t deadline_ms)
{
    e->heap[0]->engine.deadline_ms = deadline_ms;
    heap_down(e, 0);
}

void rx_deadlines_free(rx_deadlines *e)
{
    rx_free(e->heap);
    e->heap = NULL;
    e->len = e->cap = 0;
}

/* ---------------------------------------------------------------------------------------------
 * Timeouts per phase: which one applies when (deadlines.h). They read the transfer's options
 * and the times transfer.c's callbacks note (started_ms, last_activity_ms, phase).
 */

/* Whether the request body is still going out (the write timeout applies, not the read one). */
static int body_going_out(const rx_transfer *t)
{
    if (t->options.upload_stream)
        return !t->upload_finished;
    const rx_request_options *o = &t->options;
    return o->has_body && o->body_len > 64 * 1024 && t->uploaded < (int64_t)o->body_len;
}

/* The smallest of the timeouts that can apply once connected (< 0 if none is set). */
static long exchange_timeout(const rx_transfer *t)
{
    long a = t->options.read_timeout_ms, b = t->options.write_timeout_ms;
    if (a < 0)
        return b;
    return (b < 0 || a < b) ? a : b;
}

static int64_t earlier(int64_t a, int64_t b)
{
    if (a < 0)
        return b;
    return (b < 0 || a < b) ? a : b;
}

/* When the total timeout runs out, or -1 when there is none. */
static int64_t total_deadline(const rx_transfer *t)
{
    return t->options.total_timeout_ms < 0 ? -1 : t->started_ms + t->options.total_timeout_ms;
}

/* The deadline of the phase the transfer is in, or -1 when none applies. */
static int64_t phase_deadline(const rx_transfer *t)
{
    switch (t->phase) {
    case RX_PHASE_WAITING:
        /* Still queued for a connection (pool limit reached). */
        return t->options.pool_timeout_ms < 0 ? -1 : t->started_ms + t->options.pool_timeout_ms;
    case RX_PHASE_CONNECTING:
        return -1; /* curl's CONNECTTIMEOUT_MS covers connecting and the TLS handshake */
    default: {
        if (t->curl_paused)
            return -1; /* the consumer is behind, not the server: no read timeout runs */
        long timeout = body_going_out(t) ? t->options.write_timeout_ms : t->options.read_timeout_ms;
        return timeout < 0 ? -1 : t->last_activity_ms + timeout;
    }
    }
}

/* The timeout error of the phase the transfer is in, and its words. (Connecting has no
 * deadline of ours unless the total runs out there: curl times the connect itself.) */
static int phase_timeout(const rx_transfer *t, const char **text)
{
    if (t->phase == RX_PHASE_WAITING) {
        *text = "timed out waiting for a connection from the pool";
        return RX_E_POOL_TIMEOUT;
    }
    if (t->phase == RX_PHASE_CONNECTING) {
        *text = "timed out connecting";
        return RX_E_CONNECT_TIMEOUT;
    }
    if (body_going_out(t)) {
        *text = "timed out sending the request body";
        return RX_E_WRITE_TIMEOUT;
    }
    *text = "timed out waiting for response data";
    return RX_E_READ_TIMEOUT;
}

/* The deadline that applies to the transfer now, or -1 when none does. */
static int64_t current_deadline(const rx_transfer *t)
{
    return earlier(phase_deadline(t), total_deadline(t));
}

int64_t rx_timeout_first(const rx_transfer *t)
{
    /* Real deadlines only move later, except when the phase changes: the first key is the
     * earliest any phase allows. */
    long first = exchange_timeout(t);
    if (t->options.pool_timeout_ms >= 0 && (first < 0 || t->options.pool_timeout_ms < first))
        first = t->options.pool_timeout_ms;
    return earlier(first < 0 ? -1 : t->started_ms + first, total_deadline(t));
}

int rx_timeout_check(rx_transfer *t, int64_t now, int64_t *next)
{
    int64_t deadline = current_deadline(t);
    if (deadline >= 0 && deadline <= now) {
        /* The class of the phase it ran out in; the total timeout has no class of its own
         * (httpx has none), only its own words. */
        const char *text;
        int error = phase_timeout(t, &text);
        int64_t total = total_deadline(t);
        char total_text[96];
        if (total >= 0 && total <= now) {
            snprintf(total_text, sizeof total_text,
                     "the request's total timeout (%ld ms) ran out", t->options.total_timeout_ms);
            text = total_text;
        }
        rx_transfer_set_error(t, error, text);
        return 1;
    }
    /* Not due yet: activity moved it, or no timeout applies in this phase (connecting, which
     * curl times). A connecting transfer can expire no sooner than the shortest exchange
     * timeout from now. */
    if (deadline < 0) {
        long timeout = exchange_timeout(t);
        deadline = now + (timeout >= 0 ? timeout : 60000);
    }
    /* Always later than now: the engine looks again at the new key at once when it is due,
     * so a key of `now` (a zero timeout while connecting, or paused) would spin for ever. */
    *next = deadline > now ? deadline : now + 1;
    return 0;
}

void rx_timeout_bytes_arrived(rx_transfer *t, int64_t when_ms)
{
    if (t->phase == RX_PHASE_EXCHANGING && !body_going_out(t) && when_ms > t->last_activity_ms)
        t->last_activity_ms = when_ms;
}
