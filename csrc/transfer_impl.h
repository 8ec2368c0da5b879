/* The inside of a transfer (the public side is transfer.h): its struct, and the functions the
 * engine calls on it. Included only by the files that own a transfer or a part of it:
 *
 *   request.c      the submitter's side: creation, references, setters, the blocking wait
 *   transfer.c     the loop thread's: libcurl setup, callbacks, result
 *   stream.c       streaming and fed bodies, the consumer's and feeder's side
 *   engine.c       started transfers (the `engine` sub-struct)
 *   commands.c     the command nodes (`commands`), queued and taken
 *   deadlines.c, gate.c, origin.c, spin.c, completion.c
 *                  each its own sub-struct (`engine`'s heap and gate fields, `h2`, `wait`,
 *                  `cq_link`)
 *   easy_pool.c    whether a transfer's options may stay on its handle (it reads them)
 *
 * Everyone else (Cython, load.c, the tests) sees an opaque rx_transfer and uses functions.
 *
 * Life cycle: the state word says what has happened to a transfer, and every change of it goes
 * through one function (set_state in transfer.c, as libcurl's go through mstate() in multi.c),
 * which asserts in debug builds that the change is one of these and traces them all when
 * built with RX_TRACE_STATES set. One verb per transition, used the same way in code, comments and
 * docs/architecture.md ("A transfer's life"):
 *
 *   RX_CREATED    rx_transfer_new()        the caller fills in the request (only now)
 *   -- submit --> RX_SUBMITTED             rx_transfer_submit(), from rx_engine_submit (under
 *                                          the engine's lock, as the command is queued) or
 *                                          rx_engine_drive: the engine holds a reference, and
 *                                          from now on only the driver touches the request
 *                                          and response
 *   -- start ---> RX_STARTED               rx_transfer_start(): an easy handle is set up for
 *                                          it (rx_start_transfer in engine.c then attaches it
 *                                          to libcurl, or admission keeps it waiting its turn)
 *   -- finish --> RX_DONE                  rx_transfer_finish(): its verdict is in (libcurl's,
 *                                          rx_transfer_set_result(); or the engine's, cancel,
 *                                          timeout, shutdown: rx_transfer_set_error()) and it
 *                                          lets go of its easy handle (finish_transfer in
 *                                          engine.c takes it off libcurl and recycles it). A
 *                                          transfer the engine cannot start (closing, out of
 *                                          memory) is finished from RX_SUBMITTED
 *                                          (finish_unstarted in engine.c).
 *   -- deliver -> RX_DELIVERED             rx_transfer_deliver(), at once after finish: the
 *                                          response is final; the waiter is woken (its latch,
 *                                          its completion queue, or load.c's function) and
 *                                          may collect it; the engine drops its reference
 *   freed         rx_transfer_unref()      the last reference frees everything
 *
 * Publication: deliver stores RX_DELIVERED with release before it wakes anyone, and
 * rx_transfer_is_delivered() reads it with acquire, so whoever sees it sees the response. Its
 * last act is to set the latch (rx_transfer_collectable(), rx_transfer_try_collect()): a
 * waiter that sees the latch knows the completion queue has been told too. No field is written
 * by two threads; `state`, `refs` and the command flags are the only shared words (atomics),
 * and the streaming fields have their lock.
 */
#ifndef RX_TRANSFER_IMPL_H
#define RX_TRANSFER_IMPL_H

#include <stdint.h>

#include <curl/curl.h>

#include "buffer.h"
#include "completion.h"
#include "easy_pool.h"
#include "head.h"
#include "platform.h"
#include "route.h"
#include "thread.h"
#include "tls.h"
#include "transfer.h"

/* What has happened to a transfer (see "Life cycle" above). */
typedef enum rx_state {
    RX_CREATED = 0,
    RX_SUBMITTED = 1,
    RX_STARTED = 2,
    RX_DONE = 3,
    RX_DELIVERED = 4,
} rx_state;

/* Where a running transfer is, for choosing which timeout applies. */
enum { RX_PHASE_WAITING = 0, RX_PHASE_CONNECTING = 1, RX_PHASE_EXCHANGING = 2 };

/* Request header lines a transfer lists without an allocation (rx_transfer.header_nodes): a
 * client's defaults and a few of the caller's, with room to spare. */
enum { RX_INLINE_HEADER_NODES = 16 };

struct rx_engine;

/* An entry of the engine's command queue; embedded in the transfer, so queueing never allocates. */
typedef struct rx_command {
    struct rx_command *next;
    rx_transfer *transfer;
    int kind; /* RX_CMD_SUBMIT, RX_CMD_CANCEL, RX_CMD_RESUME */
} rx_command;

struct rx_transfer {
    /* ---- request: written by the submitter before submit, then read by the loop thread ---- */
    char *method;
    int idempotent;          /* rx_method_is_idempotent(method), decided once */
    char *url;
    rx_buffer header_lines;  /* "Name: value\0Name: value\0..." */
    int has_content_type;    /* the caller set Content-Type (else curl would invent one) */
    int closes_connection;   /* the caller sent Connection: close: its connection is not reused */
    rx_request_options options; /* body, timeouts, HTTP version, streaming, limits */
    rx_tls *tls;             /* TLS settings (a reference); NULL: verify with the default CAs */
    rx_route *route;         /* proxy, Unix socket, ... (a reference); NULL: straight to the host */
    int discard_body;        /* count the response body's bytes, keep none (load runs, load.h) */

    /* ---- loop-thread state ---- */
    struct rx_easy *handle; /* its easy handle, while started (rx_transfer_easy) */
    /* CURLOPT_HTTPHEADER: nodes whose strings are header_lines' own (build_header_list), in
     * header_nodes when they fit, else in one allocation. */
    struct curl_slist *header_list;
    struct curl_slist header_nodes[RX_INLINE_HEADER_NODES];
    int phase;               /* RX_PHASE_* */
    int64_t started_ms;      /* when the loop thread started it */
    int64_t last_activity_ms;/* last byte moved in either direction */
    int64_t uploaded;        /* request body bytes sent so far (large uploads only) */
    int own_error;           /* an RX_E_* decided by a callback, wins over curl's code */
    int own_errno;           /* ... and the errno behind it, if any */
    rx_head head;            /* the response head's block being received (head.h) */
    int curl_paused;         /* a callback paused the transfer: we, not the server, are behind */
    int upload_finished;     /* the read callback reported the end of a fed request body */
    size_t body_sent;        /* fed request body bytes handed to curl */
    int requests_started;    /* prerequest callbacks: times the request began to go out */
    int refused_retry;       /* libcurl sends it again because the server refused its stream */
    int resend_refused;      /* on_prereq stopped libcurl from sending it a second time */
    int reconnect;           /* on_prereq found its reused connection closed: start again */
    int reconnected;         /* ... which happened (at most once) */
    /* HTTP/2-capable transfers: their origin's bookkeeping (origin.c alone touches it). */
    struct {
        struct rx_origin *origin;  /* its origin, once admitted */
        rx_transfer *wait_next;    /* link while waiting for a stream, or released from it */
        int wait_queue;            /* which of those lists it is in (released: until admitted) */
        int may_connect;           /* let go from waiting, and may open a connection if need be */
        int refused_socket;        /* open_socket refused it a new connection: it must wait */
        curl_socket_t request_fd;  /* the socket its request went out on, or BAD */
    } h2;
    /* The engine's bookkeeping: its list of started transfers (engine.c), the timeout heap
     * (deadlines.c) and the HTTP/1.1 gate (gate.c); nothing else touches it. */
    struct {
        struct rx_engine *owner;   /* the engine that started it (for libcurl's callbacks) */
        rx_transfer *prev, *next;  /* the list of started transfers */
        int64_t deadline_ms;       /* key of its entry in the timeout heap (deadlines.h) */
        long heap_slot;            /* its place in that heap plus one; 0 when not in it */
        rx_transfer *gate_prev, *gate_next; /* the HTTP/1.1 gate's queue (gate.h) */
        int gate;                  /* the gate's state of it (gate.c) */
    } engine;

    /* ---- response: written by the loop thread, read by the waiter once delivered ---- */
    rx_response response;
    rx_buffer body_buf;
    /* The blocking waiter's timing, for its spin heuristic (spin.c reads it): deliver stamps
     * completed_us; the waiter sets started_us (monotonic microseconds) and whether its spin
     * was a probe (spin.h). A load copy's latency is the same two stamps. */
    struct {
        int64_t started_us, completed_us;
        int probe;
    } wait;

    /* ---- completion delivery: set before submit ---- */
    rx_completion_queue *cq; /* NULL: only the latch (blocking waiter); else this queue too */
    /* Its place in that queue (completion.c alone touches it). */
    struct {
        rx_transfer *next;
        int queued;          /* in the queue or a drained list not yet collected (queue lock) */
    } cq_link;
    /* Set: called on the loop thread at delivery instead of waking a waiter (load.c). */
    rx_delivered_fn on_delivered;
    void *on_delivered_arg;

    /* ---- shared between threads ---- */
    int state;               /* atomic: an rx_state, changed only by set_state (transfer.c) */
    int refs;                /* atomic reference count */
    int latch;               /* a latch (platform.h), set as delivery's last act */
    /* The engine's command nodes, embedded so that queueing never allocates (commands.c and
     * engine.c alone touch them; any thread may queue a command). */
    struct {
        rx_command submit, cancel, resume;
        int cancel_sent;     /* atomic: the cancel command was queued already */
        int resume_queued;   /* atomic: the resume command is in the queue */
    } commands;

    /* ---- streaming: guarded by stream_lock (see "Streaming" in transfer.h) ---- */
    rx_mutex stream_lock;
    rx_cond stream_cond;     /* a blocking consumer waits here */
    int paused;              /* body_buf reached RX_STREAM_HIGH_WATER: curl is paused */
    int consumer_waiting;    /* an event-loop consumer wants a completion-queue notification */
    rx_buffer upload_buf;    /* fed request body bytes not yet taken by libcurl */
    size_t upload_off;       /* ... starting at this offset */
    int upload_eof;          /* the feeder has given the last byte */
    int upload_paused;       /* the read callback found upload_buf empty: curl is paused */
};

/* Driver: started and not yet done (a command that comes later finds nothing to do). */
static inline int rx_transfer_is_started(const rx_transfer *t)
{
    return __atomic_load_n(&t->state, __ATOMIC_RELAXED) == RX_STARTED;
}

/* Waiter: whether delivery is complete and the transfer may be collected
 * (rx_transfer_try_collect(), inline for spin.c). */
static inline int rx_transfer_collectable(const rx_transfer *t)
{
    return rx_latch_is_set(&t->latch);
}

/* After done: whether it ended in an error. */
static inline int rx_transfer_failed(const rx_transfer *t) { return t->response.error != 0; }

static inline const char *rx_transfer_url(const rx_transfer *t) { return t->url; }
/* What tells its route from others' ("" straight to the host; see route.h). */
static inline const char *rx_transfer_route_key(const rx_transfer *t)
{
    return t->route != NULL ? t->route->key : "";
}

/* The HTTP version asked for: RX_HTTP_*. */
static inline int rx_transfer_http_mode(const rx_transfer *t) { return t->options.http_version; }

/* The libcurl handle a started transfer runs on; NULL before it starts and once released. */
static inline CURL *rx_transfer_easy(const rx_transfer *t)
{
    return t->handle != NULL ? t->handle->curl : NULL;
}

/* The transitions (see "Life cycle" above). rx_transfer_submit(): any thread, as the engine
 * takes the transfer. The others: the driver only.
 * rx_transfer_start(): configure an easy handle for this transfer and start its clock (the
 * pool timeout runs from here); `kept`: the handle kept options that fit it
 * (rx_easy_pool_take), else it is new or reset. 0, or RX_E_NOMEM: then it has let go of the
 * handle and is still only submitted.
 * rx_transfer_finish(): its verdict is in (set_result or set_error before); it lets go of the
 * easy handle and its per-transfer allocations and returns the handle (NULL if it had none),
 * for the engine to recycle once it has taken it off libcurl.
 * rx_transfer_deliver(): publish the response and wake the waiter. */
void rx_transfer_submit(rx_transfer *t);
int rx_transfer_start(rx_transfer *t, rx_easy *easy, CURLSH *share, int kept);
rx_easy *rx_transfer_finish(rx_transfer *t);
void rx_transfer_deliver(rx_transfer *t);

/* The verdict, before finish. rx_transfer_set_result(): libcurl's (`result`, read while the
 * handle is still its), with the response facts libcurl knows. rx_transfer_set_error(): the
 * engine's own (cancel, our timeouts, shutdown, out of memory), with its words. */
void rx_transfer_set_result(rx_transfer *t, CURLcode result);
void rx_transfer_set_error(rx_transfer *t, int error, const char *text);

/* Loop thread only, when libcurl reports it done: 1 when the transfer ended only because the
 * kept-alive connection it was to reuse had been closed by the server, before any byte of
 * it was sent. It is then set up to go out again on a new connection: the engine detaches
 * it, begins a new attempt and attaches it again. */
int rx_transfer_reconnect(rx_transfer *t);

/* Loop thread only: a streaming transfer paused because its consumer was behind goes on (the
 * consumer took bytes, or the feeder gave some); nothing when it is not paused. */
void rx_transfer_unpause(rx_transfer *t);

/* Before each attempt (setup, and a restart after waiting for a stream): no error, nothing
 * received or sent of the body yet. */
void rx_transfer_begin_attempt(rx_transfer *t);

/* GET, HEAD, OPTIONS, TRACE, PUT, DELETE: safe to send again (RFC 9110, 9.2.2). */
int rx_method_is_idempotent(const char *method);

#endif
