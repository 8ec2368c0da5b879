/* One request/response exchange, shared between the thread that submits it and the loop thread.
 * Implemented in three files: request.c (the submitter's side), transfer.c (the loop thread's:
 * libcurl setup, callbacks, result) and stream.c (streaming and fed bodies, other side).
 *
 * Life cycle: one verb per transition, used the same way in code, comments and
 * docs/architecture.md ("A transfer's life").
 *
 *   created     rx_transfer_new()            the caller owns one reference and fills in the
 *                                            request with rx_transfer_set_*() (only now)
 *   submitted   rx_engine_submit()           the engine takes a second reference; from now
 *                                            on only the loop thread touches request and
 *                                            response fields
 *   started     start_transfer (engine.c)    an easy handle is set up (rx_transfer_setup:
 *                                            RX_ACTIVE) and attached to libcurl, or
 *                                            waits for an HTTP/2 stream (origin.h)
 *   done        libcurl reports it: rx_transfer_record_result(); or the engine ends it
 *               (cancel, timeout, shutdown): rx_transfer_fail(); then finish_transfer
 *               (engine.c) takes it off libcurl and recycles the easy handle
 *               (rx_transfer_release_handle)
 *   delivered   rx_transfer_deliver()        RX_DONE; response fields are final; the waiter is
 *                                            woken (its latch, or completion queue); the engine
 *                                            drops its reference
 *   freed       rx_transfer_unref()          the last reference frees everything
 *
 * A transfer the engine cannot start (closing, out of memory) goes from submitted straight to
 * delivered (deliver_unstarted in engine.c). The request body is *borrowed*: the submitter
 * keeps it alive until the transfer is delivered. No field is written by two threads; `state`,
 * `refs` and the command flags are the only shared words (atomics), and the streaming fields
 * have their lock.
 *
 * The fields of rx_transfer belong to request.c, transfer.c and stream.c. The engine, origin.c,
 * deadlines.c, spin.c and completion.c each keep their bookkeeping in a sub-struct of their own
 * (engine, h2, wait, cq_link, commands) and reach the rest through the functions below.
 */
#ifndef RX_TRANSFER_H
#define RX_TRANSFER_H

#include <stdint.h>

#include <curl/curl.h>

#include "buffer.h"
#include "completion.h"
#include "platform.h"
#include "route.h"
#include "thread.h"
#include "tls.h"

/* Error codes of our own, beside libcurl's CURLcode values (which all stay below 1000). */
enum {
    RX_E_CANCELLED = 1000,      /* cancel command or interrupted waiter */
    RX_E_READ_TIMEOUT = 1001,   /* no response data for read_timeout */
    RX_E_WRITE_TIMEOUT = 1002,  /* request body stalled for write_timeout */
    RX_E_POOL_TIMEOUT = 1003,   /* no connection became free within pool_timeout */
    RX_E_NOMEM = 1004,          /* out of memory while buffering */
    RX_E_ENGINE_CLOSED = 1005,  /* engine shut down before or while the transfer ran */
    RX_E_CONNECT_TIMEOUT = 1006,/* curl's connect timeout fired */
    RX_E_INCOMPLETE_BODY = 1007,/* connection closed before the whole body arrived */
    RX_E_HEADERS_TOO_LARGE = 1008, /* response header block over max_header_bytes */
    RX_E_INVALID_HEADER = 1009, /* CR, LF or NUL in a request header name or value */
    RX_E_INVALID_URL = 1010,    /* control character or space in the URL */
    RX_E_INVALID_METHOD = 1011, /* method is not an HTTP token */
    RX_E_BAD_FRAMING = 1012,    /* conflicting Content-Length headers in the response */
    RX_E_NOT_RESENT = 1013,     /* sent, connection lost before any answer, not idempotent */
    RX_E_BAD_STATUS_LINE = 1014,/* a status line whose code is not exactly three digits */
    RX_E_INCOMPLETE_HEADERS = 1015, /* the connection closed inside the response headers */
    RX_E_BAD_HEADER_LINE = 1016, /* a response field name that is not a token, or " :" */
    RX_E_BODY_TOO_LARGE = 1017, /* a response body read whole passed max_body_bytes */
    RX_E_SOCKET_OPTION = 1018,  /* setsockopt() refused one of the route's socket options */
};

/* Response header blocks larger than max_header_bytes are refused (a hostile server cannot
 * make us buffer unbounded headers). The default is httpx's (httpcore's h11 limit). */
#define RX_DEFAULT_MAX_HEADER_BYTES (100 * 1024)

/* HTTP versions the caller may ask for. */
enum { RX_HTTP_1_1 = 0, RX_HTTP_2_TLS = 1, RX_HTTP_2_PRIOR_KNOWLEDGE = 2 };

/* The state word: created and submitted transfers are RX_NEW, started ones RX_ACTIVE. */
enum { RX_NEW = 0, RX_ACTIVE = 1, RX_DONE = 2 };

/* Where a running transfer is, for choosing which timeout applies. */
enum { RX_PHASE_WAITING = 0, RX_PHASE_CONNECTING = 1, RX_PHASE_EXCHANGING = 2 };

/* Fields of the final response's header block that the Python side acts on, noted as the block
 * arrives so that it need not scan the block for them (header_marks). */
enum { RX_MARK_CONTENT_ENCODING = 1, RX_MARK_SET_COOKIE = 2 };

/* Request header lines a transfer lists without an allocation (rx_transfer.header_nodes): a
 * client's defaults and a few of the caller's, with room to spare. */
enum { RX_INLINE_HEADER_NODES = 16 };

struct rx_engine;
typedef struct rx_transfer rx_transfer;

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
    const char *body;        /* borrowed, see above; NULL = no body */
    size_t body_len;
    int has_body;
    long connect_timeout_ms; /* < 0 means no timeout */
    long read_timeout_ms;
    long write_timeout_ms;
    long pool_timeout_ms;
    long total_timeout_ms;   /* from start to the last body byte, whatever the phase */
    int http_version;        /* RX_HTTP_* */
    rx_tls *tls;             /* TLS settings (a reference); NULL: verify with the default CAs */
    rx_route *route;         /* proxy, Unix socket, ... (a reference); NULL: straight to the host */
    int stream;              /* hand the body over in pieces as it arrives (see "Streaming") */
    int upload_stream;       /* the request body is fed while the transfer runs (ditto) */
    int64_t upload_length;   /* its length when known (Content-Length), else -1: chunked */
    long max_header_bytes;   /* response header block limit; 0: RX_DEFAULT_MAX_HEADER_BYTES */
    int64_t max_body_bytes;  /* a body read whole (not streamed) is at most this; 0: no limit */
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
    int64_t content_length;  /* Content-Length of the response being received, -1 if none */
    int64_t body_received;   /* body bytes received so far (as sent: not content-decoded) */
    long block_status;       /* status code of the header block being received */
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

    /* ---- response: written by the loop thread, read by the waiter once state == RX_DONE ---- */
    long status;
    int http_version_used;   /* CURL_HTTP_VERSION_* */
    rx_buffer headers;       /* raw header block of the final response, status line included */
    int header_marks;        /* RX_MARK_* bits: fields that block carries (set with it) */
    rx_buffer body_buf;
    int64_t total_time_us;
    int error;               /* 0, a CURLcode, or an RX_E_* */
    int os_errno;            /* the system's errno behind a failed socket call, else 0 */
    char error_text[CURL_ERROR_SIZE];
    /* The blocking waiter's timing, for its spin heuristic (spin.c reads it): deliver stamps
     * completed_us; the waiter sets started_us (monotonic microseconds) and whether its spin
     * was a probe (spin.h). */
    struct {
        int64_t started_us, completed_us;
        int probe;
    } wait;

    /* ---- completion delivery: set before submit ---- */
    rx_completion_queue *cq; /* NULL: wake `done` (blocking waiter); else append to this queue */
    /* Its place in that queue (completion.c alone touches it; rx_cq_next() reads the link). */
    struct {
        rx_transfer *next;
        int queued;          /* in the queue or a drained list not yet settled (queue lock) */
    } cq_link;
    void *owner;             /* opaque to C: the Python object waiting for this transfer */
    /* Set: called on the loop thread at delivery instead of waking a waiter (load.c). */
    void (*on_delivered)(rx_transfer *t, void *arg);
    void *on_delivered_arg;

    /* ---- shared between threads ---- */
    int state;               /* atomic: RX_NEW, RX_ACTIVE, RX_DONE */
    int refs;                /* atomic reference count */
    int done;                /* a latch (platform.h), set once state is RX_DONE */
    /* The engine's command nodes, embedded so that queueing never allocates (engine.c alone
     * touches them; any thread may queue a command). */
    struct {
        rx_command submit, cancel, resume;
        int cancel_sent;     /* atomic: the cancel command was queued already */
        int resume_queued;   /* atomic: the resume command is in the queue */
    } commands;

    /* ---- streaming: guarded by stream_lock (see "Streaming" below) ---- */
    rx_mutex stream_lock;
    rx_cond stream_cond;     /* a blocking consumer waits here */
    int headers_done;        /* status, http_version_used and headers are final */
    int paused;              /* body_buf reached RX_STREAM_HIGH_WATER: curl is paused */
    int consumer_waiting;    /* an event-loop consumer wants a completion-queue notification */
    rx_buffer upload_buf;    /* fed request body bytes not yet taken by libcurl */
    size_t upload_off;       /* ... starting at this offset */
    int upload_eof;          /* the feeder has given the last byte */
    int upload_paused;       /* the read callback found upload_buf empty: curl is paused */
};

/* Streaming
 * ---------
 * With `stream` set, the waiter is told as soon as the final response's header block is in
 * (headers_done), and body bytes collect in body_buf, which the consumer empties with
 * rx_stream_take(). Past RX_STREAM_HIGH_WATER buffered bytes the write callback pauses the
 * transfer; rx_stream_take() then queues a resume command, so memory stays bounded however slow
 * the consumer is and no Python code ever runs on the loop thread. A blocking consumer sleeps on
 * stream_cond; an event-loop consumer arms `consumer_waiting` and is woken through its
 * completion queue (one notification per wait, not per chunk). */
#define RX_STREAM_HIGH_WATER (1024 * 1024)

/* Fed request bodies work the same way in the other direction: the feeder appends up to
 * RX_UPLOAD_HIGH_WATER bytes (rx_upload_feed) and waits for room; the read callback pauses the
 * transfer when it finds nothing to send, and the next feed resumes it. */
#define RX_UPLOAD_HIGH_WATER (256 * 1024)

rx_transfer *rx_transfer_new(void);
/* A new transfer with src's request: method, URL, header lines, body (borrowed from the same
 * owner), timeouts, HTTP version, TLS settings, route and response limits. NULL when out of
 * memory. Not for fed or streamed transfers. */
rx_transfer *rx_transfer_copy(const rx_transfer *src);
void rx_transfer_ref(rx_transfer *t);
void rx_transfer_unref(rx_transfer *t);

/* Request setters; each returns 0, or an RX_E_* code when the input is refused. */
int rx_transfer_set_method(rx_transfer *t, const char *method, size_t len);
int rx_transfer_set_url(rx_transfer *t, const char *url, size_t len);
int rx_transfer_add_header(rx_transfer *t, const char *name, size_t name_len,
                           const char *value, size_t value_len);
/* Use these TLS settings (takes a reference). */
void rx_transfer_set_tls(rx_transfer *t, rx_tls *tls);
/* Connect this way (takes a reference). */
void rx_transfer_set_route(rx_transfer *t, rx_route *route);
/* Deliver the completion to `cq` as well; the latch is set either way (takes a queue
 * reference). */
void rx_transfer_set_completion_queue(rx_transfer *t, rx_completion_queue *cq);

/* Wait for completion: timeout_ms < 0 waits for ever. Returns 0 when done, else -1 (timed out or
 * interrupted by a signal: the caller then checks for signals and waits again). */
int rx_transfer_wait(rx_transfer *t, long timeout_ms);

static inline int rx_transfer_is_done(const rx_transfer *t)
{
    return __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == RX_DONE;
}

/* Loop thread: started and not yet done. */
static inline int rx_transfer_is_running(const rx_transfer *t)
{
    return __atomic_load_n(&t->state, __ATOMIC_RELAXED) == RX_ACTIVE;
}

/* Waiter: whether it was delivered, without blocking (its latch is set once it has been). */
static inline int rx_transfer_try_collect(rx_transfer *t) { return rx_latch_is_set(&t->done); }

/* After done: whether it ended in an error. */
static inline int rx_transfer_failed(const rx_transfer *t) { return t->error != 0; }

static inline const char *rx_transfer_url(const rx_transfer *t) { return t->url; }
/* What tells its route from others' ("" straight to the host; see route.h). */
static inline const char *rx_transfer_route_key(const rx_transfer *t)
{
    return t->route != NULL ? t->route->key : "";
}

/* The HTTP version asked for: RX_HTTP_*. */
static inline int rx_transfer_http_mode(const rx_transfer *t) { return t->http_version; }

/* Hand the body allocation to the caller (free() it). */
char *rx_transfer_take_body(rx_transfer *t, size_t *len);

/* What a pooled easy handle still has set from its last transfer. After a plain GET over
 * HTTP/1.1 (rx_transfer_setup_reusable) its options stay, and the next such GET with the same
 * TLS settings and route sets only its own (URL, headers, error buffer, connect timeout);
 * anything else resets the handle first. libcurl supports reusing a handle without a reset
 * (its easy interface is one handle, transfer after transfer); the reset and the options it
 * makes us set again cost a request about a microsecond. `tls` and `route` are references,
 * held while the handle waits. */
typedef struct {
    int kept; /* 0: the handle was reset (or is new); the rest is unused */
    rx_tls *tls;
    rx_route *route;
} rx_easy_setup;

/* Loop thread only: whether `t` is a plain GET whose options may stay on its handle when it is
 * done, and that may take such a handle as it is when it starts (see above). */
int rx_transfer_setup_reusable(const rx_transfer *t);
/* Note that the handle `t` used keeps its options (`t` must be reusable), or drop such a note
 * (its references; the handle must be reset or freed with it). */
void rx_easy_setup_keep(rx_easy_setup *s, const rx_transfer *t);
void rx_easy_setup_drop(rx_easy_setup *s);

/* An easy handle, and the transfer it runs now. The handle's callbacks are given this, not the
 * transfer: their data options (and CURLOPT_PRIVATE) are set once per handle, when it is made
 * and after each reset, as are its owner's options (`prepare`: the engine's socket callbacks
 * and connection limits), and a transfer that starts on it only fills in `transfer`. Ten
 * options fewer per request (1,600 instructions of the load generator's 50,400,
 * benchmarks/instructions.py). Loop thread only. */
typedef struct rx_easy rx_easy;
typedef int (*rx_easy_prepare_fn)(rx_easy *x, void *arg); /* 0, or nonzero: failed */
struct rx_easy {
    CURL *curl;
    rx_transfer *transfer; /* NULL between transfers */
    rx_easy_prepare_fn prepare;
    void *prepare_arg;
};

/* The transfer a callback's data (an rx_easy, CURLOPT_*DATA) belongs to now. */
static inline rx_transfer *rx_easy_data_transfer(void *data)
{
    return ((rx_easy *)data)->transfer;
}

/* The libcurl handle a started transfer runs on; NULL before it starts and once released. */
static inline CURL *rx_transfer_easy(const rx_transfer *t)
{
    return t->handle != NULL ? t->handle->curl : NULL;
}

/* A new handle with its options set (callbacks' data, then `prepare`); NULL when out of
 * memory or `prepare` failed. */
rx_easy *rx_easy_new(rx_easy_prepare_fn prepare, void *prepare_arg);
void rx_easy_free(rx_easy *x);
/* curl_easy_reset(), then the handle's options again. 0 or RX_E_NOMEM. */
int rx_easy_reset(rx_easy *x);
/* The transfer an easy handle of ours runs now; NULL for a handle that is not ours (libcurl's
 * own admin handle). */
rx_transfer *rx_easy_transfer_of(CURL *h);

/* Loop thread only, "started": configure an easy handle for this transfer and start its clock
 * (the pool timeout runs from here); `left` says what the handle has set from its last
 * transfer (NULL or not kept: a new or reset handle). 0 or RX_E_NOMEM. */
int rx_transfer_setup(rx_transfer *t, rx_easy *easy, CURLSH *share, const rx_easy_setup *left);
/* Loop thread only, "done": copy libcurl's verdict and the response facts into the transfer. */
void rx_transfer_record_result(rx_transfer *t, CURLcode result);
/* Loop thread only, "done" without libcurl's verdict (cancel, our timeouts, shutdown). */
void rx_transfer_fail(rx_transfer *t, int error, const char *text);
/* Loop thread only: let go of the easy handle and its per-transfer allocations; returns the
 * handle (for the engine to recycle). */
rx_easy *rx_transfer_release_handle(rx_transfer *t);
/* Loop thread only, "delivered": publish the result and wake the waiter. */
void rx_transfer_deliver(rx_transfer *t);

const char *rx_transfer_http_version(const rx_transfer *t);

/* Loop thread only. Timeouts (which applies depends on the phase: waiting for a connection,
 * connecting, exchanging; and on whether the body is still going out):
 * rx_transfer_first_deadline(): the transfer's first deadline, or -1 when it has no timeout.
 * rx_transfer_check_deadline(): at `now`, if a timeout has run out, fail the transfer with it
 * and return 1; else return 0 and set *next to when to look again (early, never late). */
int64_t rx_transfer_first_deadline(const rx_transfer *t);
int rx_transfer_check_deadline(rx_transfer *t, int64_t now, int64_t *next);

/* Loop thread only, at libcurl's "done": 1 when the transfer ended only because the
 * kept-alive connection it was to reuse had been closed by the server, before any byte of
 * it was sent. It is then set up to go out again on a new connection: the engine detaches
 * it, begins a new attempt and attaches it again. */
int rx_transfer_reconnect(rx_transfer *t);

/* Loop thread only: bytes arrived on the transfer's connection at `when_ms` (before any
 * callback saw them): the read timeout runs from then. No effect while the request body is
 * going out (the write timeout is about the other direction). */
void rx_transfer_bytes_arrived(rx_transfer *t, int64_t when_ms);

/* Loop thread only: a streaming transfer paused because its consumer was behind goes on (the
 * consumer took bytes, or the feeder gave some); nothing when it is not paused. */
void rx_transfer_unpause(rx_transfer *t);

/* Consumer side of a streaming transfer (any thread but the loop thread).
 * rx_stream_ready(): 1 when the headers are in (want_body = 0), or when body bytes are buffered
 * (want_body = 1); also 1 once the transfer is done. Otherwise 0, and with `arm` set the next
 * event pushes the transfer onto its completion queue.
 * rx_stream_wait(): block until ready or timeout_ms passes (< 0: no limit); 0 or ETIMEDOUT.
 * rx_stream_take(): the buffered body bytes (malloc'd, the caller frees; NULL when none); sets
 * *resume when the transfer was paused and must be resumed with rx_engine_resume(). */
int rx_stream_ready(rx_transfer *t, int want_body, int arm);
int rx_stream_wait(rx_transfer *t, int want_body, long timeout_ms);
char *rx_stream_take(rx_transfer *t, size_t *len, int *resume);

/* Feeder side of a fed request body (upload_stream set before submit).
 * rx_upload_feed(): append bytes; returns how many it took (all, or as many as fit below
 * RX_UPLOAD_HIGH_WATER: feed the rest next), 0 when the buffer is full (wait for room: with
 * `arm` set an event loop is notified), RX_FEED_OVER when the transfer is over (stop feeding),
 * RX_FEED_NOMEM when the copy could not be allocated (the transfer goes on: cancel it). Sets
 * *resume when rx_engine_resume() must be called.
 * rx_upload_wait(): block until there is room or the transfer is over; 0 or ETIMEDOUT.
 * rx_upload_end(): no more bytes will come; sets *resume like rx_upload_feed(). */
enum { RX_FEED_OVER = -1, RX_FEED_NOMEM = -2 };
long rx_upload_feed(rx_transfer *t, const char *data, size_t len, int arm, int *resume);
int rx_upload_wait(rx_transfer *t, long timeout_ms);
void rx_upload_end(rx_transfer *t, int *resume);

/* Before each attempt (setup, and a restart after waiting for a stream): no error, nothing
 * received or sent of the body yet. */
void rx_transfer_begin_attempt(rx_transfer *t);

/* GET, HEAD, OPTIONS, TRACE, PUT, DELETE: safe to send again (RFC 9110, 9.2.2). */
int rx_method_is_idempotent(const char *method);

/* Number of transfers alive in this process (debug aid: tests assert it returns to zero). */
long rx_transfer_live_count(void);

#endif
