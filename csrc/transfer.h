/* One request/response exchange, shared between the thread that submits it and the loop thread:
 * what Cython, load.c and the engine's other files may use. The struct itself is opaque here;
 * its definition, and the functions only the files that own a transfer call, are in
 * transfer_impl.h.
 *
 * Life cycle (docs/architecture.md, "A transfer's life", has the picture):
 *
 *   created     rx_transfer_new()       the caller owns one reference and fills in the request
 *                                       (rx_transfer_set_*(), only now)
 *   submitted   rx_engine_submit()      the engine takes a second reference; from now on only
 *                                       the engine touches the request and response
 *   started, done                       the engine's (transfer_impl.h)
 *   delivered   rx_transfer_is_delivered() turns true: the response (rx_transfer_response())
 *                                       is final; the waiter is woken (its latch, or its
 *                                       completion queue) and may collect it
 *   freed       rx_transfer_unref()     the last reference frees everything
 *
 * The request body is *borrowed*: the submitter keeps it alive until the transfer is
 * delivered.
 */
#ifndef RX_TRANSFER_H
#define RX_TRANSFER_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "buffer.h"
#include "completion.h"
#include "route.h"
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

/* Fields of the final response's header block that the Python side acts on, noted as the block
 * arrives so that it need not scan the block for them (rx_response.header_marks). */
enum { RX_MARK_CONTENT_ENCODING = 1, RX_MARK_SET_COOKIE = 2 };

typedef struct rx_transfer rx_transfer;

/* The request's settings besides method, URL, headers, TLS and route: given in one call,
 * rx_transfer_set_options(), before submit. */
typedef struct rx_request_options {
    const char *body;        /* borrowed, see above; NULL with has_body: an empty body */
    size_t body_len;
    int has_body;            /* 0: no body at all */
    long connect_timeout_ms; /* < 0 means no timeout, for each of the five */
    long read_timeout_ms;
    long write_timeout_ms;
    long pool_timeout_ms;
    long total_timeout_ms;   /* from start to the last body byte, whatever the phase */
    int http_version;        /* RX_HTTP_* */
    int stream;              /* hand the body over in pieces as it arrives (see "Streaming") */
    int upload_stream;       /* the request body is fed while the transfer runs (ditto) */
    int64_t upload_length;   /* its length when known (Content-Length), else -1: chunked */
    long max_header_bytes;   /* response header block limit; 0: RX_DEFAULT_MAX_HEADER_BYTES */
    int64_t max_body_bytes;  /* a body read whole (not streamed) is at most this; 0: no limit */
} rx_request_options;

/* The response, as the loop thread writes it into the transfer: read it once the transfer is
 * delivered, or, for a streamed one, its head (status, http_version_used, headers,
 * header_marks) once headers_done is set (rx_stream_ready()). */
typedef struct rx_response {
    long status;
    int http_version_used;   /* CURL_HTTP_VERSION_* */
    int headers_done;        /* status, http_version_used, headers and header_marks are final */
    int header_marks;        /* RX_MARK_* bits: fields the header block carries */
    rx_buffer headers;       /* raw header block of the final response, status line included */
    int64_t body_received;   /* body bytes received (as sent: not content-decoded) */
    int64_t total_time_us;
    int error;               /* 0, a CURLcode, or an RX_E_* */
    int os_errno;            /* the system's errno behind a failed socket call, else 0 */
    char error_text[CURL_ERROR_SIZE];
} rx_response;

/* Streaming
 * ---------
 * With `stream` set, the waiter is told as soon as the final response's header block is in
 * (headers_done), and body bytes collect in the transfer, which the consumer empties with
 * rx_stream_take(). Past RX_STREAM_HIGH_WATER buffered bytes the loop thread pauses the
 * transfer; rx_stream_take() then asks for a resume command, so memory stays bounded however
 * slow the consumer is and no Python code ever runs on the loop thread. A blocking consumer
 * sleeps in rx_stream_wait(); an event-loop consumer arms its wait (rx_stream_ready()) and is
 * woken through its completion queue (one notification per wait, not per chunk). */
#define RX_STREAM_HIGH_WATER (1024 * 1024)

/* Fed request bodies work the same way in the other direction: the feeder appends up to
 * RX_UPLOAD_HIGH_WATER bytes (rx_upload_feed) and waits for room; the loop thread pauses the
 * transfer when it finds nothing to send, and the next feed resumes it. */
#define RX_UPLOAD_HIGH_WATER (256 * 1024)

rx_transfer *rx_transfer_new(void);
void rx_transfer_ref(rx_transfer *t);
void rx_transfer_unref(rx_transfer *t);

/* Request setters; each returns 0, or an RX_E_* code when the input is refused. */
int rx_transfer_set_method(rx_transfer *t, const char *method, size_t len);
int rx_transfer_set_url(rx_transfer *t, const char *url, size_t len);
int rx_transfer_add_header(rx_transfer *t, const char *name, size_t name_len,
                           const char *value, size_t value_len);
/* Everything else about the request, in one call (the options are copied). */
void rx_transfer_set_options(rx_transfer *t, const rx_request_options *options);
/* Use these TLS settings (takes a reference). */
void rx_transfer_set_tls(rx_transfer *t, rx_tls *tls);
/* Connect this way (takes a reference). */
void rx_transfer_set_route(rx_transfer *t, rx_route *route);
/* Deliver the completion to `cq` as well; the latch is set either way (takes a queue
 * reference). */
void rx_transfer_set_completion_queue(rx_transfer *t, rx_completion_queue *cq);

/* The defaults rx_transfer_new() starts from: no body, no timeouts, HTTP/1.1, not streamed,
 * no limits of our own. */
void rx_request_options_init(rx_request_options *options);

/* Wait for delivery: timeout_ms < 0 waits for ever. Returns 0 when delivered, else -1 (timed
 * out or interrupted by a signal: the caller then checks for signals and waits again). */
int rx_transfer_wait(rx_transfer *t, long timeout_ms);

/* Whether it has been delivered (any thread): its response is final. */
int rx_transfer_is_delivered(const rx_transfer *t);

/* Waiter: whether it may be collected now, without blocking: delivery is complete, its latch
 * set and its completion queue (if any) told. */
int rx_transfer_try_collect(rx_transfer *t);

/* The response: one call, no copy; the view lives as long as the transfer. */
const rx_response *rx_transfer_response(const rx_transfer *t);

/* "HTTP/1.1", "HTTP/2", ...: the response's http_version_used, named. */
const char *rx_transfer_http_version(const rx_transfer *t);

/* Hand the body allocation to the caller (free it with rx_buffer_free_stolen()). */
char *rx_transfer_take_body(rx_transfer *t, size_t *len);

/* Consumer side of a streaming transfer (any thread but the loop thread).
 * rx_stream_ready(): 1 when the headers are in (want_body = 0), or when body bytes are buffered
 * (want_body = 1); also 1 once the transfer is delivered. Otherwise 0, and with `arm` set the
 * next event pushes the transfer onto its completion queue.
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

/* Load runs (load.c): a copy of a template transfer's request (method, URL, header lines, body
 * borrowed from the same owner, options but stream and upload_stream, TLS settings, route)
 * whose response body is counted, not kept, and whose delivery calls on_delivered(t, arg) on
 * the loop thread instead of waking a waiter; its latency clock starts now. NULL when out of
 * memory.
 * Why the engine carries this for `python -m requestx.bench` (README, "load generator"), a
 * product of its own: with no Python per request it measures the engine and the server, as wrk
 * does its C loop. The cell it pays for (docs/performance.md): requestx.bench / wrk at 200
 * connections went from 0.34 (every request through AsyncClient.send) to 0.55 when load runs
 * moved into the engine. */
typedef void (*rx_delivered_fn)(rx_transfer *t, void *arg);
rx_transfer *rx_transfer_load_copy(const rx_transfer *src, rx_delivered_fn on_delivered,
                                   void *arg);
/* A load copy's time from rx_transfer_load_copy() to its delivery, in microseconds. */
int64_t rx_transfer_load_latency_us(const rx_transfer *t);

/* Number of transfers alive in this process (debug aid: tests assert it returns to zero). */
long rx_transfer_live_count(void);

#endif
