/* A transfer's request side, used by the thread that submits it: creation and references,
 * the setters that validate what goes on the wire, and the blocking wait for completion. The
 * loop thread's side is transfer.c; streaming and fed bodies are stream.c. */
#include "transfer_impl.h"
#include "heap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "token.h"

static long live_transfers; /* atomic */

enum { RX_HEADERS_FIRST_ALLOCATION = 1000 };

static char *dup_n(const char *s, size_t len);

rx_transfer *rx_transfer_new(void)
{
    rx_transfer *t = rx_calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->refs = 1;
    t->h2.request_fd = CURL_SOCKET_BAD; /* origin.c's: "no request sent yet" */
    /* The rest of rx_request_options_init(), which calloc did already. */
    rx_request_options *o = &t->options;
    o->connect_timeout_ms = o->read_timeout_ms = o->write_timeout_ms = -1;
    o->pool_timeout_ms = o->total_timeout_ms = -1;
    o->upload_length = -1;
    rx_mutex_init(&t->stream_lock);
    rx_cond_init(&t->stream_cond);
    /* The header block's first allocation is made here, in the thread that will free it, not
     * by the loop thread on the first header line. With glibc's malloc (the engine's heap
     * where it is not jemalloc, heap.h), memory malloc'd in one thread and freed in another
     * goes back to the first thread's arena under its lock, and the two threads then
     * contended for it on every request (measured: 0.77 futex calls per async request at 64
     * tasks, from free() in PendingTransfer.result); below 1,032 bytes, glibc's per-thread
     * cache takes it without a lock, and most response header blocks fit. jemalloc's
     * per-thread caches take a block whichever thread made it, so there this only moves an
     * allocation off the loop thread. Failure is harmless: the loop thread allocates as
     * before. */
    rx_buffer_reserve(&t->response.headers, RX_HEADERS_FIRST_ALLOCATION);
    __atomic_add_fetch(&live_transfers, 1, __ATOMIC_RELAXED);
    return t;
}

rx_transfer *rx_transfer_load_copy(const rx_transfer *src, rx_delivered_fn on_delivered,
                                   void *arg)
{
    rx_transfer *t = rx_transfer_new();
    if (t == NULL)
        return NULL;
    if (src->method != NULL && (t->method = dup_n(src->method, strlen(src->method))) == NULL)
        goto fail;
    if (src->url != NULL && (t->url = dup_n(src->url, strlen(src->url))) == NULL)
        goto fail;
    if (src->header_lines.len > 0 &&
        rx_buffer_append(&t->header_lines, src->header_lines.data, src->header_lines.len) != 0)
        goto fail;
    t->idempotent = src->idempotent;
    t->has_content_type = src->has_content_type;
    t->closes_connection = src->closes_connection;
    t->options = src->options;
    t->options.stream = t->options.upload_stream = 0; /* neither is a load run's */
    if (src->tls != NULL)
        rx_transfer_set_tls(t, src->tls);
    if (src->route != NULL)
        rx_transfer_set_route(t, src->route);
    t->discard_body = 1;
    t->on_delivered = on_delivered;
    t->on_delivered_arg = arg;
    t->wait.started_us = rx_clock_us();
    return t;

fail:
    rx_transfer_unref(t);
    return NULL;
}

int64_t rx_transfer_load_latency_us(const rx_transfer *t)
{
    return t->wait.completed_us - t->wait.started_us;
}

void rx_transfer_ref(rx_transfer *t) { __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED); }

void rx_transfer_unref(rx_transfer *t)
{
    if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* The easy handle and header list are always released by the loop thread at completion. */
    rx_free(t->method);
    rx_free(t->url);
    rx_tls_unref(t->tls);
    rx_route_unref(t->route);
    rx_buffer_free(&t->header_lines);
    rx_buffer_free(&t->response.headers);
    rx_buffer_free(&t->body_buf);
    rx_buffer_free(&t->upload_buf);
    if (t->cq != NULL)
        rx_cq_unref(t->cq);
    rx_cond_destroy(&t->stream_cond);
    rx_mutex_destroy(&t->stream_lock);
    rx_free(t);
    __atomic_sub_fetch(&live_transfers, 1, __ATOMIC_RELAXED);
}

long rx_transfer_live_count(void) { return __atomic_load_n(&live_transfers, __ATOMIC_RELAXED); }

/* ---------------------------------------------------------------------------------------------
 * Request setters. They refuse what would let a caller smuggle bytes onto the wire: a CR, LF or
 * NUL in a header or URL would end the line early and start a request of the attacker's own.
 */

static int is_token(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!rx_is_token_char((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Whether a header value holds a byte that would end its line early (CR, LF, NUL). */
static int has_line_break(const char *s, size_t len)
{
    return memchr(s, '\r', len) != NULL || memchr(s, '\n', len) != NULL ||
           memchr(s, '\0', len) != NULL;
}

static char *dup_n(const char *s, size_t len)
{
    char *p = rx_malloc(len + 1);
    if (p != NULL) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

int rx_transfer_set_method(rx_transfer *t, const char *method, size_t len)
{
    if (!is_token(method, len))
        return RX_E_INVALID_METHOD;
    rx_free(t->method);
    if ((t->method = dup_n(method, len)) == NULL)
        return RX_E_NOMEM;
    t->idempotent = rx_method_is_idempotent(t->method); /* read per attempt in on_prereq */
    return 0;
}

int rx_transfer_set_url(rx_transfer *t, const char *url, size_t len)
{
    /* The Python layer percent-encodes; anything not printable ASCII here is a bug or an attack. */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c <= 0x20 || c >= 0x7f)
            return RX_E_INVALID_URL;
    }
    rx_free(t->url);
    return (t->url = dup_n(url, len)) ? 0 : RX_E_NOMEM;
}

/* Whether a comma-separated list of tokens (a Connection header's value) has `close`, in any
 * case, between optional spaces and tabs. */
static int lists_close(const char *value, size_t len)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
            i++;
        size_t start = i;
        while (i < len && value[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t'))
            end--;
        if (end - start == 5 && strncasecmp(value + start, "close", 5) == 0)
            return 1;
    }
    return 0;
}

int rx_transfer_add_header(rx_transfer *t, const char *name, size_t name_len,
                           const char *value, size_t value_len)
{
    if (!is_token(name, name_len) || has_line_break(value, value_len))
        return RX_E_INVALID_HEADER;
    if (name_len == 12 && strncasecmp(name, "content-type", 12) == 0)
        t->has_content_type = 1;
    /* RFC 9112 section 9.6: a client that sends `close` sends no further request on that
     * connection. libcurl reads only the server's Connection header, so the transfer says it
     * (set_up_handle: CURLOPT_FORBID_REUSE). */
    if (name_len == 10 && strncasecmp(name, "connection", 10) == 0 &&
        lists_close(value, value_len))
        t->closes_connection = 1;
    rx_buffer *b = &t->header_lines;
    /* curl sends "Name:" with no value only if written "Name;": an empty value must keep it. */
    const char *sep = value_len ? ": " : ";";
    size_t sep_len = value_len ? 2 : 1;
    size_t line_len = name_len + sep_len + value_len + 1; /* "Name: value" and its NUL */
    if (rx_buffer_reserve_more(b, line_len) != 0)
        return RX_E_NOMEM;
    char *line = b->data + b->len;
    memcpy(line, name, name_len);
    memcpy(line + name_len, sep, sep_len);
    memcpy(line + name_len + sep_len, value, value_len);
    line[line_len - 1] = '\0';
    b->len += line_len;
    return 0;
}

void rx_request_options_init(rx_request_options *o)
{
    *o = (rx_request_options){
        .connect_timeout_ms = -1,
        .read_timeout_ms = -1,
        .write_timeout_ms = -1,
        .pool_timeout_ms = -1,
        .total_timeout_ms = -1,
        .http_version = RX_HTTP_1_1,
        .upload_length = -1,
    };
}

void rx_transfer_set_options(rx_transfer *t, const rx_request_options *options)
{
    t->options = *options;
}

void rx_transfer_set_tls(rx_transfer *t, rx_tls *tls)
{
    rx_tls_ref(tls);
    rx_tls_unref(t->tls);
    t->tls = tls;
}

void rx_transfer_set_route(rx_transfer *t, rx_route *route)
{
    rx_route_ref(route);
    rx_route_unref(t->route);
    t->route = route;
}

void rx_transfer_set_completion_queue(rx_transfer *t, rx_completion_queue *cq)
{
    rx_cq_ref(cq);
    if (t->cq != NULL)
        rx_cq_unref(t->cq);
    t->cq = cq;
}

int rx_transfer_wait(rx_transfer *t, long timeout_ms)
{
    if (timeout_ms >= 0)
        return rx_latch_wait(&t->latch, timeout_ms);
    while (rx_latch_wait(&t->latch, -1) != 0) { /* a signal: nobody to tell here, wait on */
    }
    return 0;
}

int rx_transfer_is_delivered(const rx_transfer *t)
{
    return __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == RX_DELIVERED;
}

int rx_transfer_try_collect(rx_transfer *t) { return rx_transfer_collectable(t); }

const rx_response *rx_transfer_response(const rx_transfer *t) { return &t->response; }

char *rx_transfer_take_body(rx_transfer *t, size_t *len)
{
    return rx_buffer_steal(&t->body_buf, len);
}

int rx_method_is_idempotent(const char *method)
{
    static const char *const idempotent[] = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"};
    for (size_t i = 0; i < sizeof idempotent / sizeof *idempotent; i++)
        if (strcmp(method, idempotent[i]) == 0)
            return 1;
    return 0;
}
