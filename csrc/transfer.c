/* A transfer on the loop thread: its life cycle (the one function that changes its state), its
 * easy handle's options, the libcurl callbacks (they only append to C buffers and note the
 * time), and its verdict. The submitter's side is request.c; streaming and fed bodies,
 * consumer side, are stream.c; the response head's lines are checked by head.c, the handle
 * comes from easy_pool.c, and which timeout applies is deadlines.c's. */
#include "transfer_impl.h"
#include "heap.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "clock.h"
#include "head.h"
#include "platform.h"

/* ---------------------------------------------------------------------------------------------
 * Life cycle: the one place a transfer's state changes (transfer_impl.h, "Life cycle").
 */

/* Build with -DRX_TRACE_STATES=1 to have every change of state written to stderr. */
#ifndef RX_TRACE_STATES
#define RX_TRACE_STATES 0
#endif

#if !defined(NDEBUG) || RX_TRACE_STATES
/* The transitions transfer_impl.h lists, and no other. */
static int is_transition(rx_state from, rx_state to)
{
    switch (to) {
    case RX_SUBMITTED: return from == RX_CREATED;
    case RX_STARTED: return from == RX_SUBMITTED;
    case RX_DONE: return from == RX_STARTED || from == RX_SUBMITTED;
    case RX_DELIVERED: return from == RX_DONE;
    default: return 0;
    }
}
#endif

/* Every change of state, as libcurl's mstate(): asserted in debug builds, traced with
 * RX_TRACE_STATES. The store is a release: deliver's is what rx_transfer_is_delivered()
 * acquires (the response is written before it); the others need no ordering of their own
 * (submit's is under the engine's lock, and the driver writes the rest) and cost nothing more
 * on x86. */
static void set_state(rx_transfer *t, rx_state to)
{
#if !defined(NDEBUG) || RX_TRACE_STATES
    rx_state from = (rx_state)__atomic_load_n(&t->state, __ATOMIC_RELAXED);
#if RX_TRACE_STATES
    static const char *const names[] = {"created", "submitted", "started", "done", "delivered"};
    fprintf(stderr, "requestx: transfer %p: %s -> %s%s\n", (void *)t, names[from], names[to],
            is_transition(from, to) ? "" : " (not a transition)");
#endif
    assert(is_transition(from, to));
#endif
    __atomic_store_n(&t->state, (int)to, __ATOMIC_RELEASE);
}

void rx_transfer_submit(rx_transfer *t) { set_state(t, RX_SUBMITTED); }

/* ---------------------------------------------------------------------------------------------
 * libcurl callbacks: loop thread only. They append to C buffers and note the time; nothing else.
 */

/* Streaming: wake whoever consumes this transfer. Called with stream_lock held; returns 1 when
 * the caller must push the transfer onto its completion queue once the lock is released. */
static int notify_consumer_locked(rx_transfer *t)
{
    rx_cond_broadcast(&t->stream_cond);
    if (t->consumer_waiting && t->cq != NULL) {
        t->consumer_waiting = 0;
        return 1;
    }
    return 0;
}

static size_t on_stream_body(rx_transfer *t, char *data, size_t n)
{
    rx_mutex_lock(&t->stream_lock);
    if (t->body_buf.len >= RX_STREAM_HIGH_WATER) {
        /* Full: curl keeps `data` and offers it again after rx_engine_resume(). */
        t->paused = 1;
        t->curl_paused = 1;
        rx_mutex_unlock(&t->stream_lock);
        return CURL_WRITEFUNC_PAUSE;
    }
    int failed = rx_buffer_append(&t->body_buf, data, n) != 0;
    int push = notify_consumer_locked(t);
    rx_mutex_unlock(&t->stream_lock);
    if (push)
        rx_cq_push(t->cq, t);
    if (failed) {
        t->own_error = RX_E_NOMEM;
        return 0;
    }
    return n;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    rx_transfer *t = rx_easy_data_transfer(userdata);
    size_t n = size * nmemb;
    t->last_activity_ms = rx_loop_now_ms;
    t->response.body_received += (int64_t)n; /* a paused chunk is offered again: see below */
    if (t->discard_body)
        return n;
    if (t->options.stream) {
        size_t taken = on_stream_body(t, data, n);
        if (taken != n)
            t->response.body_received -= (int64_t)n;
        return taken;
    }
    int64_t limit = t->options.max_body_bytes;
    if (t->body_buf.cap == 0) {
        /* Pre-size from Content-Length (capped: a hostile length must not reserve gigabytes),
         * and refuse at once a body that says it is over the limit. */
        curl_off_t expected = -1;
        CURLcode got =
            curl_easy_getinfo(rx_transfer_easy(t), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
        if (got != CURLE_OK)
            expected = -1;
        if (limit > 0 && expected > limit) {
            t->own_error = RX_E_BODY_TOO_LARGE;
            return 0;
        }
        if (expected > 0 && expected <= 64L * 1024 * 1024)
            rx_buffer_reserve(&t->body_buf, (size_t)expected);
    }
    if (limit > 0 && (int64_t)(t->body_buf.len + n) > limit) {
        t->own_error = RX_E_BODY_TOO_LARGE;
        return 0;
    }
    if (rx_buffer_append(&t->body_buf, data, n) != 0) {
        t->own_error = RX_E_NOMEM;
        return 0; /* curl aborts the transfer with CURLE_WRITE_ERROR */
    }
    return n;
}

/* A fed request body: libcurl asks for up to `size * nitems` bytes whenever it can send. */
static size_t on_read(char *buffer, size_t size, size_t nitems, void *userdata)
{
    rx_transfer *t = userdata;
    size_t room = size * nitems;
    rx_mutex_lock(&t->stream_lock);
    size_t avail = t->upload_buf.len - t->upload_off;
    if (avail == 0) {
        int eof = t->upload_eof;
        if (!eof)
            t->upload_paused = t->curl_paused = 1; /* fed bytes will resume it */
        rx_mutex_unlock(&t->stream_lock);
        if (!eof)
            return CURL_READFUNC_PAUSE;
        t->upload_finished = 1;
        t->last_activity_ms = rx_loop_now_ms; /* the read timeout starts now */
        return 0;
    }
    size_t n = avail < room ? avail : room;
    memcpy(buffer, t->upload_buf.data + t->upload_off, n);
    t->upload_off += n;
    t->body_sent += n;
    if (t->options.upload_length >= 0 && t->body_sent >= (size_t)t->options.upload_length)
        t->upload_finished = 1; /* curl knows the length and asks no more */
    if (t->upload_off == t->upload_buf.len)
        t->upload_off = t->upload_buf.len = 0;
    int push = notify_consumer_locked(t); /* the feeder may be waiting for room */
    rx_mutex_unlock(&t->stream_lock);
    if (push)
        rx_cq_push(t->cq, t);
    t->last_activity_ms = rx_loop_now_ms;
    return n;
}

/* libcurl sends a request again on its own in two cases (libcurl 8.22, transfer.c,
 * Curl_retry_request): its stream was refused (RST_STREAM REFUSED_STREAM, or beyond a GOAWAY's
 * last stream id), which means the server never processed it; or it went out on a reused
 * connection that closed before any response byte came, which does not: the server may have
 * acted on it. Only the first case is safe for a request that is not idempotent (on_prereq),
 * and libcurl tells which it is only in its informational text: "HTTP/2 stream N refused by
 * server" (http2.c: RST_STREAM REFUSED_STREAM, which nghttp2 also reports for the streams a
 * GOAWAY leaves out), and "REFUSED_STREAM, retrying a fresh connect" when the connection was
 * new. So such requests over HTTP/2 read that text (measured at about 1.5 us a
 * request on libcurl 7.88; GETs and HTTP/1.1 requests never pay it). */
/* Whether `needle` (not empty) occurs in text[0..n): memmem is not in POSIX.1-2008 nor on
 * Windows. */
static int contains(const char *text, size_t n, const char *needle, size_t needle_len)
{
    while (n >= needle_len) {
        const char *at = memchr(text, needle[0], n - needle_len + 1);
        if (at == NULL)
            return 0;
        if (memcmp(at, needle, needle_len) == 0)
            return 1;
        n -= (size_t)(at - text) + 1;
        text = at + 1;
    }
    return 0;
}

static int note_refused_stream(CURL *h, curl_infotype type, char *text, size_t n, void *userdata)
{
    (void)h;
    static const char refused[] = "REFUSED_STREAM", by_server[] = "refused by server";
    rx_transfer *t = userdata;
    if (type != CURLINFO_TEXT)
        return 0;
    if ((n >= sizeof refused - 1 && memcmp(text, refused, sizeof refused - 1) == 0) ||
        contains(text, n, by_server, sizeof by_server - 1))
        t->refused_retry = 1;
    return 0;
}

void rx_transfer_begin_attempt(rx_transfer *t)
{
    t->phase = RX_PHASE_WAITING; /* for a connection, or an HTTP/2 stream (origin.h) */
    t->response.error_text[0] = '\0';
    t->response.os_errno = 0;
    rx_head_begin(&t->head);
    t->response.body_received = 0;
    t->body_sent = 0;
    t->upload_finished = 0;
}

/* The blank line after the final (non-1xx) header block: status and headers are final. */
static void headers_complete(rx_transfer *t)
{
    /* Asked of libcurl only when needed: most transfers are neither tracked nor streamed, and
     * rx_transfer_set_result asks again at the end. */
    long status = 0, version = 0;
    if (rx_admission_tracks(t) || t->options.stream)
        curl_easy_getinfo(rx_transfer_easy(t), CURLINFO_HTTP_VERSION, &version);
    if (rx_admission_tracks(t)) /* over HTTP/2, others wait for a stream on this connection */
        rx_admission_answer_started(t, version == CURL_HTTP_VERSION_2_0);
    if (!t->options.stream) {
        t->response.headers_done = 1;
        return;
    }
    curl_easy_getinfo(rx_transfer_easy(t), CURLINFO_RESPONSE_CODE, &status);
    rx_mutex_lock(&t->stream_lock);
    t->response.status = status;
    t->response.http_version_used = (int)version;
    t->response.headers_done = 1;
    int push = notify_consumer_locked(t);
    rx_mutex_unlock(&t->stream_lock);
    if (push)
        rx_cq_push(t->cq, t);
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
    rx_transfer *t = rx_easy_data_transfer(userdata);
    size_t n = size * nmemb;
    t->last_activity_ms = rx_loop_now_ms;
    if (t->response.headers_done)
        return n; /* trailers after a chunked body: not part of the response headers */
    size_t limit = t->options.max_header_bytes > 0 ? (size_t)t->options.max_header_bytes
                                                   : (size_t)RX_DEFAULT_MAX_HEADER_BYTES;
    int line = rx_head_take(&t->head, &t->response.headers, limit, data, n);
    if (line == RX_HEAD_END) {
        t->response.header_marks = t->head.marks;
        headers_complete(t);
    } else if (line != RX_HEAD_STATUS && line != RX_HEAD_FIELD) {
        t->own_error = line; /* refused: an RX_E_* */
        return 0;
    }
    return n;
}

/* A new socket is about to connect: the transfer left the pool queue. */
static int on_sockopt(void *userdata, curl_socket_t fd, curlsocktype purpose)
{
    rx_transfer *t = rx_easy_data_transfer(userdata);
    if (t->phase == RX_PHASE_WAITING)
        t->phase = RX_PHASE_CONNECTING;
    if (t->route != NULL && rx_route_apply_sockopts(t->route, fd) != 0) {
        t->own_error = RX_E_SOCKET_OPTION;
        t->own_errno = errno;
        return CURL_SOCKOPT_ERROR;
    }
    return CURL_SOCKOPT_OK;
}

/* Whether the kept-alive HTTP/1.x connection a request is about to reuse was closed by the
 * server (or has bytes nobody asked for, such as a TLS close_notify) while it sat in the pool.
 * libcurl 8.22 looks at an idle connection at most once a second (conncache.c,
 * Curl_cpool_conn_seems_healthy) and sends on it regardless; a GET it then sends again, but a
 * POST on_prereq must refuse to resend, although the server never saw it. One non-blocking
 * peek, made only for requests that are not idempotent on a reused connection. */
static int reused_connection_closed(rx_transfer *t)
{
    long new_connections = 1;
    curl_socket_t fd = CURL_SOCKET_BAD;
    CURL *h = rx_transfer_easy(t);
    if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &new_connections) != CURLE_OK ||
        new_connections != 0)
        return 0;
    if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK ||
        fd == CURL_SOCKET_BAD)
        return 0;
    return rx_socket_has_news(fd);
}

/* The connection is ready (new or reused) and the request is about to go out. */
static int on_prereq(void *userdata, char *conn_primary_ip, char *conn_local_ip,
                     int conn_primary_port, int conn_local_port)
{
    rx_transfer *t = rx_easy_data_transfer(userdata);
    t->phase = RX_PHASE_EXCHANGING;
    t->last_activity_ms = rx_loop_now_ms;
    if (t->requests_started > 0 && !t->refused_retry && !t->idempotent) {
        /* libcurl is about to send it again on its own because the connection it reused died
         * before any answer (see note_refused_stream). The server may have acted on it. */
        t->resend_refused = 1;
        return CURL_PREREQFUNC_ABORT;
    }
    if (t->requests_started == 0 && t->options.http_version == RX_HTTP_1_1 && !t->reconnected &&
        !t->idempotent && reused_connection_closed(t)) {
        /* Nothing was sent: the engine starts it again on a new connection (rx_transfer_
         * reconnect). */
        t->reconnect = 1;
        return CURL_PREREQFUNC_ABORT;
    }
    t->requests_started++;
    t->refused_retry = 0;
    if (rx_admission_tracks(t)) {
        curl_socket_t fd = CURL_SOCKET_BAD;
        curl_easy_getinfo(rx_transfer_easy(t), CURLINFO_ACTIVESOCKET, &fd);
        rx_admission_request_started(t, fd);
    }
    return CURL_PREREQFUNC_OK;
}

/* Upload progress counts as activity, so a long upload is timed per stall, not as a whole. */
static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    rx_transfer *t = userdata;
    if (ulnow != t->uploaded) {
        t->uploaded = ulnow;
        t->last_activity_ms = rx_loop_now_ms;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Easy-handle setup and result collection (loop thread only).
 */

#define SET(opt, val)                                                                              \
    do {                                                                                           \
        if (curl_easy_setopt(h, opt, val) != CURLE_OK)                                             \
            goto fail;                                                                             \
    } while (0)

/* Lines every request lists before its own: an empty "Expect:" stops curl's 100-continue wait
 * on uploads; an empty "Content-Type:" stops the form type curl would add to a body given as
 * POSTFIELDS (httpx sends none). Not const: a curl_slist's strings are `char *`; libcurl only
 * reads them. */
static char no_expect_line[] = "Expect:";
static char no_content_type_line[] = "Content-Type:";

/* CURLOPT_HTTPHEADER's list without copying a string: each node points at a line of
 * header_lines (or at a line above), which outlive the transfer's use of the handle, and libcurl
 * only reads the list. curl_slist_append would make two allocations a line and walk the list
 * each time. */
static int build_header_list(rx_transfer *t)
{
    char *lines = t->header_lines.data;
    size_t len = t->header_lines.len;
    int no_content_type = t->options.has_body && !t->has_content_type;
    size_t count = 1 + (size_t)no_content_type;
    for (size_t off = 0; off < len; off += strlen(lines + off) + 1)
        count++;
    struct curl_slist *nodes = t->header_nodes;
    if (count > RX_INLINE_HEADER_NODES && (nodes = rx_malloc(count * sizeof *nodes)) == NULL)
        return -1;
    size_t n = 0;
    nodes[n++].data = no_expect_line;
    if (no_content_type)
        nodes[n++].data = no_content_type_line;
    for (size_t off = 0; off < len; off += strlen(lines + off) + 1)
        nodes[n++].data = lines + off;
    for (size_t i = 0; i + 1 < n; i++)
        nodes[i].next = &nodes[i + 1];
    nodes[n - 1].next = NULL;
    t->header_list = nodes;
    return 0;
}

/* The options that are the transfer's own: every transfer sets them, kept handle or not. */
static int set_own_options(rx_transfer *t, CURL *h)
{
    SET(CURLOPT_URL, t->url);
    SET(CURLOPT_HTTPHEADER, t->header_list);
    SET(CURLOPT_ERRORBUFFER, t->response.error_text);
    long connect_timeout_ms = t->options.connect_timeout_ms;
    if (connect_timeout_ms >= 0)
        /* curl treats 0 as "default (300 s)"; 1 ms is the closest to "immediately". */
        SET(CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms ? connect_timeout_ms : 1L);
    else
        SET(CURLOPT_CONNECTTIMEOUT_MS, (long)INT32_MAX);
    return 0;

fail:
    return RX_E_NOMEM;
}

/* The options of `t` on its handle `x`: only its own when the handle kept a plain GET's that
 * fit it (easy_pool.h), else all. 0 or RX_E_NOMEM. */
static int set_up_handle(rx_transfer *t, rx_easy *x, CURLSH *share, int kept)
{
    CURL *h = x->curl;
    const rx_request_options *o = &t->options;
    if (build_header_list(t) != 0)
        goto fail;
    if (kept)
        return set_own_options(t, h);
    if (set_own_options(t, h) != 0)
        goto fail;
    SET(CURLOPT_NOSIGNAL, 1L);
    /* A transfer cancelled while its name is being resolved: libcurl would join the resolver
     * thread, blocking the loop (and every other transfer) until getaddrinfo returns. */
    SET(CURLOPT_QUICK_EXIT, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L); /* redirects are followed in Python, hop by hop */
    SET(CURLOPT_PATH_AS_IS, 1L);     /* the Python layer already normalised the URL */
    SET(CURLOPT_PROXY, "");          /* no proxy from the environment behind the caller's back */
    /* Nor a no_proxy list: which URLs bypass a route's proxy (route.c) is decided in Python, as
     * httpx decides it (mounts). Unset, libcurl would read no_proxy and NO_PROXY from the
     * environment for every transfer, proxy or not: two scans of the whole environment. */
    SET(CURLOPT_NOPROXY, "");
    SET(CURLOPT_SHARE, share);
    /* Bodies are handed over as received: the Python layer undoes Content-Encoding, so that it
     * can check the compressed stream really ended (libcurl 7.88 accepts a truncated gzip body
     * as complete) and so that `iter_raw()` has the bytes as sent. The Accept-Encoding header
     * is the caller's to send, too. */
    SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);

    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    SET(CURLOPT_PREREQFUNCTION, on_prereq);
    if (o->has_body && o->write_timeout_ms >= 0 && o->body_len > 64 * 1024) {
        /* Only large uploads pay for progress callbacks. */
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, t);
        SET(CURLOPT_NOPROGRESS, 0L);
    }

    switch (o->http_version) {
    case RX_HTTP_2_TLS: SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS); break;
    case RX_HTTP_2_PRIOR_KNOWLEDGE:
        SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
        break;
    default: SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1); break;
    }

    /* The caller's `Connection: close` (rx_transfer_add_header): libcurl closes the
     * connection once this transfer is done with it and no other transfer uses it. A reset
     * clears the option again: such a transfer keeps no options (easy_pool.c). */
    if (t->closes_connection)
        SET(CURLOPT_FORBID_REUSE, 1L);

    /* A reset handle verifies peer and host against libcurl's default CA store. */
    if (t->tls != NULL && rx_tls_apply(t->tls, h) != 0)
        goto fail;
    if (t->route != NULL && rx_route_apply(t->route, h) != 0)
        goto fail;

    /* Method and body. curl picks GET/POST itself; anything else is a custom request. */
    int is_get = strcmp(t->method, "GET") == 0;
    int is_post = strcmp(t->method, "POST") == 0;
    if (strcmp(t->method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (o->upload_stream) {
        /* A fed body: curl pulls it through on_read. UPLOAD would make the method PUT, so the
         * method is always named; an unknown length means chunked on HTTP/1.1. */
        SET(CURLOPT_UPLOAD, 1L);
        SET(CURLOPT_READFUNCTION, on_read);
        SET(CURLOPT_READDATA, t);
        SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)o->upload_length);
        SET(CURLOPT_CUSTOMREQUEST, t->method);
    } else if (o->has_body) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
        SET(CURLOPT_POSTFIELDS, o->body ? o->body : "");
        if (!is_post)
            SET(CURLOPT_CUSTOMREQUEST, t->method);
    } else if (!is_get) {
        SET(CURLOPT_CUSTOMREQUEST, t->method);
    }

    if (o->http_version != RX_HTTP_1_1 && !t->idempotent) {
        SET(CURLOPT_DEBUGFUNCTION, note_refused_stream);
        SET(CURLOPT_DEBUGDATA, t);
        SET(CURLOPT_VERBOSE, 1L);
    }
    return 0;

fail:
    return RX_E_NOMEM;
}

#undef SET

/* Let go of the easy handle and what the transfer allocated for it. */
static rx_easy *release_handle(rx_transfer *t)
{
    rx_easy *h = t->handle;
    if (h != NULL)
        h->transfer = NULL;
    t->handle = NULL;
    if (t->header_list != t->header_nodes)
        rx_free(t->header_list); /* NULL, or nodes too many for header_nodes */
    t->header_list = NULL;
    return h;
}

int rx_transfer_start(rx_transfer *t, rx_easy *x, CURLSH *share, int kept)
{
    t->handle = x;
    x->transfer = t;
    t->started_ms = t->last_activity_ms = rx_loop_now_ms;
    rx_transfer_begin_attempt(t);
    if (set_up_handle(t, x, share, kept) != 0) {
        release_handle(t);
        return RX_E_NOMEM;
    }
    set_state(t, RX_STARTED);
    return 0;
}

static const char *http_version_name(long v)
{
    switch (v) {
    case CURL_HTTP_VERSION_1_0: return "HTTP/1.0";
    case CURL_HTTP_VERSION_2_0: return "HTTP/2";
    case CURL_HTTP_VERSION_3: return "HTTP/3";
    default: return "HTTP/1.1";
    }
}

const char *rx_transfer_http_version(const rx_transfer *t)
{
    return http_version_name(t->response.http_version_used);
}

/* The server answered in full while the request body was still going out, and libcurl then
 * failed on sending the rest: the answer stands (RFC 9113 section 8.1: a client must not
 * discard a response because the server reset the stream with NO_ERROR; httpx, too, reads
 * the response after a failed write). libcurl 8.22 fails such a transfer with
 * CURLE_SEND_ERROR when the body is fed by callback and resumes after the server's
 * RST_STREAM(NO_ERROR): measured 4 failures in 8,400 fed POSTs to nginx, h2c and TLS, before
 * this check (tests/faults/test_h2_early_answers.py), none in 9,600 after.
 * Complete means the whole Content-Length arrived; without one it cannot be told. */
static int answered_before_failed_send(const rx_transfer *t, CURLcode result, long status)
{
    if (result != CURLE_SEND_ERROR && result != CURLE_HTTP2_STREAM && result != CURLE_HTTP2)
        return 0;
    int64_t length = t->head.content_length;
    return !t->own_error && t->response.headers_done && status >= 200 && length >= 0 &&
           t->response.body_received == length;
}

/* The message for an error a callback decided; empty when libcurl's text says it well. */
static void describe_own_error(rx_transfer *t)
{
    char *text = t->response.error_text;
    size_t size = sizeof t->response.error_text;
    long max_header_bytes = t->options.max_header_bytes;
    if (t->own_error == RX_E_HEADERS_TOO_LARGE)
        snprintf(text, size,
                 "the response header block is larger than %ld bytes (max_header_bytes)",
                 max_header_bytes > 0 ? max_header_bytes : (long)RX_DEFAULT_MAX_HEADER_BYTES);
    else if (t->own_error == RX_E_BODY_TOO_LARGE)
        snprintf(text, size,
                 "the response body is larger than %lld bytes (max_body_bytes); stream the "
                 "response to read a body of any size",
                 (long long)t->options.max_body_bytes);
    else if (t->own_error == RX_E_BAD_STATUS_LINE)
        snprintf(text, size, "malformed status line: the status code must be three digits");
    else if (t->own_error == RX_E_BAD_HEADER_LINE)
        snprintf(text, size,
                 "malformed header line: the field name must be a token directly followed by "
                 "':'");
    else if (t->own_error == RX_E_BAD_FRAMING)
        snprintf(text, size, "the response has conflicting Content-Length headers");
    else if (t->own_error == RX_E_SOCKET_OPTION)
        snprintf(text, size, "setsockopt() refused one of the socket_options: %s",
                 strerror(t->own_errno));
}

void rx_transfer_set_result(rx_transfer *t, CURLcode result)
{
    CURL *h = rx_transfer_easy(t);
    rx_response *r = &t->response;
    if (t->own_error) {
        r->error = t->own_error;
        describe_own_error(t); /* libcurl wrote its own words ("Failed writing header") */
    } else if (result == CURLE_OPERATION_TIMEDOUT)
        r->error = RX_E_CONNECT_TIMEOUT; /* the only timeout curl itself enforces for us */
    else
        r->error = (int)result;

    long status = 0, version = 0, os_errno = 0;
    curl_off_t total = 0;
    if (r->error != 0) {
        /* Connection refused, reset, unreachable: the words a person can act on, which
         * libcurl's own text leaves out ("Could not connect to server"). */
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
        r->os_errno = (int)os_errno;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total);
    if (!t->options.stream || !r->headers_done) {
        /* A streaming consumer may be reading these already: they were set at headers_done. */
        r->status = status;
        r->http_version_used = (int)version;
    }
    r->total_time_us = total;
    if (answered_before_failed_send(t, result, status))
        r->error = 0;
    /* libcurl 8.22 ends with CURLE_OK when the connection closes inside the header block: no
     * response at all, whatever it says. */
    if (r->error == 0 && !r->headers_done) {
        r->error = RX_E_INCOMPLETE_HEADERS;
        snprintf(r->error_text, sizeof r->error_text,
                 "the connection closed before the response's header block was complete");
    }
    /* Whatever the protocol layer concluded, a body shorter than its Content-Length is not a
     * complete response (no content decoding happens here, so the counts compare). */
    int64_t length = t->head.content_length;
    if (r->error == 0 && length >= 0 && r->body_received < length &&
        strcmp(t->method, "HEAD") != 0 && status != 204 && status != 304 && status >= 200) {
        r->error = RX_E_INCOMPLETE_BODY;
        snprintf(r->error_text, sizeof r->error_text,
                 "the response body ended after %lld of its %lld bytes (Content-Length)",
                 (long long)r->body_received, (long long)length);
    }
    if (r->error != 0 && t->resend_refused) {
        r->error = RX_E_NOT_RESENT;
        snprintf(r->error_text, sizeof r->error_text,
                 "the connection closed after the %s request was sent and before any response; "
                 "it was not sent again, as it is not idempotent and the server may have "
                 "processed it", t->method);
    }
    if (r->error && r->error_text[0] == '\0' && r->error < RX_E_CANCELLED)
        snprintf(r->error_text, sizeof r->error_text, "%s", curl_easy_strerror(result));
}

void rx_transfer_set_error(rx_transfer *t, int error, const char *text)
{
    t->response.error = error;
    t->response.os_errno = 0;
    if (text != NULL)
        snprintf(t->response.error_text, sizeof t->response.error_text, "%s", text);
}

rx_easy *rx_transfer_finish(rx_transfer *t)
{
    rx_easy *h = release_handle(t);
    set_state(t, RX_DONE);
    return h;
}

void rx_transfer_deliver(rx_transfer *t)
{
    t->wait.completed_us = rx_clock_us();
    set_state(t, RX_DELIVERED); /* published: see set_state */
    /* The latch is set in both modes: an event loop that shuts down waits on it for the
     * transfers it cancelled, since their request bodies are borrowed until then. */
    if (t->options.stream || t->options.upload_stream) {
        rx_mutex_lock(&t->stream_lock);
        t->consumer_waiting = 0;
        rx_cond_broadcast(&t->stream_cond);
        rx_mutex_unlock(&t->stream_lock);
    }
    if (t->on_delivered != NULL) {
        t->on_delivered(t, t->on_delivered_arg); /* a load copy: nobody waits for it */
        return;
    }
    if (t->cq != NULL)
        rx_cq_push(t->cq, t);
    rx_latch_set(&t->latch); /* last: the waiter may collect it now */
}

int rx_transfer_reconnect(rx_transfer *t)
{
    if (!t->reconnect)
        return 0;
    t->reconnect = 0;
    t->reconnected = 1; /* once: a fresh connection is not stale */
    curl_easy_setopt(rx_transfer_easy(t), CURLOPT_FRESH_CONNECT, 1L);
    return 1;
}

void rx_transfer_unpause(rx_transfer *t)
{
    if (!t->curl_paused)
        return;
    t->curl_paused = 0;
    t->last_activity_ms = rx_loop_now_ms; /* the read timeout starts again from now */
    /* May call the write callback at once with the data it held back (and pause again). */
    curl_easy_pause(rx_transfer_easy(t), CURLPAUSE_CONT);
}
