/* One transfer: request validation (any thread, before submit), easy-handle setup and the
 * libcurl callbacks (loop thread only), and the hand-off of results to the waiter. */
#include "transfer.h"

#include <errno.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "h2gate.h"

static long live_transfers; /* atomic */

rx_transfer *rx_transfer_new(void)
{
    rx_transfer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    if (sem_init(&t->done, 0, 0) != 0) {
        free(t);
        return NULL;
    }
    t->refs = 1;
    t->heap_index = -1;
    t->connect_timeout_ms = t->read_timeout_ms = t->write_timeout_ms = t->pool_timeout_ms = -1;
    t->submit_cmd.transfer = t->cancel_cmd.transfer = t->resume_cmd.transfer = t;
    pthread_mutex_init(&t->stream_lock, NULL);
    pthread_cond_init(&t->stream_cond, NULL);
    __atomic_add_fetch(&live_transfers, 1, __ATOMIC_RELAXED);
    return t;
}

void rx_transfer_ref(rx_transfer *t) { __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED); }

void rx_transfer_unref(rx_transfer *t)
{
    if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* The easy handle and header list are always released by the loop thread at completion. */
    free(t->method);
    free(t->url);
    rx_tls_unref(t->tls);
    rx_buffer_free(&t->header_lines);
    rx_buffer_free(&t->headers);
    rx_buffer_free(&t->body_buf);
    rx_buffer_free(&t->upload_buf);
    if (t->cq != NULL)
        rx_cq_unref(t->cq);
    sem_destroy(&t->done);
    pthread_cond_destroy(&t->stream_cond);
    pthread_mutex_destroy(&t->stream_lock);
    free(t);
    __atomic_sub_fetch(&live_transfers, 1, __ATOMIC_RELAXED);
}

long rx_transfer_live_count(void) { return __atomic_load_n(&live_transfers, __ATOMIC_RELAXED); }

/* ---------------------------------------------------------------------------------------------
 * Request setters. They refuse what would let a caller smuggle bytes onto the wire: a CR, LF or
 * NUL in a header or URL would end the line early and start a request of the attacker's own.
 */

/* RFC 9110 token characters (method and header field names). */
static int is_token_char(unsigned char c)
{
    if (c >= '0' && c <= '9') return 1;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_token(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_token_char((unsigned char)s[i]))
            return 0;
    return 1;
}

static char *dup_n(const char *s, size_t len)
{
    char *p = malloc(len + 1);
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
    free(t->method);
    return (t->method = dup_n(method, len)) ? 0 : RX_E_NOMEM;
}

int rx_transfer_set_url(rx_transfer *t, const char *url, size_t len)
{
    /* The Python layer percent-encodes; anything not printable ASCII here is a bug or an attack. */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c <= 0x20 || c >= 0x7f)
            return RX_E_INVALID_URL;
    }
    free(t->url);
    return (t->url = dup_n(url, len)) ? 0 : RX_E_NOMEM;
}

int rx_transfer_add_header(rx_transfer *t, const char *name, size_t name_len,
                           const char *value, size_t value_len)
{
    if (!is_token(name, name_len))
        return RX_E_INVALID_HEADER;
    for (size_t i = 0; i < value_len; i++) {
        char c = value[i];
        if (c == '\r' || c == '\n' || c == '\0')
            return RX_E_INVALID_HEADER;
    }
    if (name_len == 12 && strncasecmp(name, "content-type", 12) == 0)
        t->has_content_type = 1;
    rx_buffer *b = &t->header_lines;
    /* curl sends "Name:" with no value only if written "Name;": an empty value must keep it. */
    const char *sep = value_len ? ": " : ";";
    size_t sep_len = value_len ? 2 : 1;
    if (rx_buffer_append(b, name, name_len) || rx_buffer_append(b, sep, sep_len) ||
        rx_buffer_append(b, value, value_len) || rx_buffer_append(b, "", 1))
        return RX_E_NOMEM;
    return 0;
}

void rx_transfer_set_tls(rx_transfer *t, rx_tls *tls)
{
    rx_tls_ref(tls);
    rx_tls_unref(t->tls);
    t->tls = tls;
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
    int rc;
    if (timeout_ms < 0) {
        do
            rc = sem_wait(&t->done);
        while (rc != 0 && errno == EINTR);
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1000000000L;
    }
    rc = sem_clockwait(&t->done, CLOCK_MONOTONIC, &ts);
    return rc == 0 ? 0 : errno;
}

char *rx_transfer_take_body(rx_transfer *t, size_t *len) { return rx_buffer_steal(&t->body_buf, len); }

/* ---------------------------------------------------------------------------------------------
 * libcurl callbacks: loop thread only. They append to C buffers and note the time; nothing else.
 */

/* Streaming: wake whoever consumes this transfer. Called with stream_lock held; returns 1 when
 * the caller must push the transfer onto its completion queue once the lock is released. */
static int notify_consumer_locked(rx_transfer *t)
{
    pthread_cond_broadcast(&t->stream_cond);
    if (t->consumer_waiting && t->cq != NULL) {
        t->consumer_waiting = 0;
        return 1;
    }
    return 0;
}

static size_t on_stream_body(rx_transfer *t, char *data, size_t n)
{
    pthread_mutex_lock(&t->stream_lock);
    if (t->body_buf.len >= RX_STREAM_HIGH_WATER) {
        /* Full: curl keeps `data` and offers it again after rx_engine_resume(). */
        t->paused = 1;
        t->curl_paused = 1;
        pthread_mutex_unlock(&t->stream_lock);
        return CURL_WRITEFUNC_PAUSE;
    }
    int failed = rx_buffer_append(&t->body_buf, data, n) != 0;
    int push = notify_consumer_locked(t);
    pthread_mutex_unlock(&t->stream_lock);
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
    rx_transfer *t = userdata;
    size_t n = size * nmemb;
    t->last_activity_ms = rx_loop_now_ms;
    t->body_received += (int64_t)n; /* a paused chunk is offered again: see below */
    if (t->stream) {
        size_t taken = on_stream_body(t, data, n);
        if (taken != n)
            t->body_received -= (int64_t)n;
        return taken;
    }
    if (t->body_buf.cap == 0) {
        /* Pre-size from Content-Length (capped: a hostile length must not reserve gigabytes). */
        curl_off_t expected = -1;
        if (curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected) == CURLE_OK &&
            expected > 0 && expected <= 64L * 1024 * 1024)
            rx_buffer_reserve(&t->body_buf, (size_t)expected);
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
    t->upload_reads++;
    pthread_mutex_lock(&t->stream_lock);
    size_t avail = t->upload_buf.len - t->upload_off;
    if (avail == 0) {
        int eof = t->upload_eof;
        if (!eof)
            t->upload_paused = t->curl_paused = 1; /* fed bytes will resume it */
        pthread_mutex_unlock(&t->stream_lock);
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
    if (t->upload_length >= 0 && t->body_sent >= (size_t)t->upload_length)
        t->upload_finished = 1; /* curl knows the length and asks no more */
    if (t->upload_off == t->upload_buf.len)
        t->upload_off = t->upload_buf.len = 0;
    int push = notify_consumer_locked(t); /* the feeder may be waiting for room */
    pthread_mutex_unlock(&t->stream_lock);
    if (push)
        rx_cq_push(t->cq, t);
    t->last_activity_ms = rx_loop_now_ms;
    return n;
}

int rx_method_is_idempotent(const char *method)
{
    static const char *const idempotent[] = {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"};
    for (size_t i = 0; i < sizeof idempotent / sizeof *idempotent; i++)
        if (strcmp(method, idempotent[i]) == 0)
            return 1;
    return 0;
}

/* A whole (not fed) request body, handed to curl by callback rather than as POSTFIELDS (see
 * resends_answered_requests), so that libcurl can rewind it only when on_seek_whole agrees. */
static size_t on_read_whole(char *buffer, size_t size, size_t nitems, void *userdata)
{
    rx_transfer *t = userdata;
    size_t room = size * nitems, left = t->body_len - t->body_sent;
    size_t n = left < room ? left : room;
    if (n > 0)
        memcpy(buffer, t->body + t->body_sent, n);
    t->body_sent += n;
    t->upload_reads++;
    if (n > 0 || !t->upload_finished)
        t->last_activity_ms = rx_loop_now_ms; /* once finished, the read timeout runs from here */
    if (t->body_sent == t->body_len)
        t->upload_finished = 1; /* curl knows the length and asks no more */
    return n;
}

/* libcurl may rewind a whole body only to send the request again on a stream the server
 * refused (RST_STREAM REFUSED_STREAM, or beyond a GOAWAY's last stream id): never processed. */
static int on_seek_whole(void *userdata, curl_off_t offset, int origin)
{
    rx_transfer *t = userdata;
    if (!rx_transfer_unprocessed(t) || offset != 0 || origin != SEEK_SET)
        return CURL_SEEKFUNC_CANTSEEK;
    t->body_sent = 0;
    t->upload_finished = 0;
    return CURL_SEEKFUNC_OK;
}

static int text_starts(const char *text, size_t n, const char *prefix)
{
    size_t len = strlen(prefix);
    return n >= len && memcmp(text, prefix, len) == 0;
}

/* Where `key` starts in `text` (not NUL-terminated), or NULL. */
static const char *find_text(const char *text, size_t n, const char *key)
{
    size_t len = strlen(key);
    for (size_t i = 0; i + len <= n; i++)
        if (memcmp(text + i, key, len) == 0)
            return text + i;
    return NULL;
}

/* The decimal number right after `key` in `text`, or -1. */
static long number_after(const char *text, size_t n, const char *key)
{
    const char *at = find_text(text, n, key);
    if (at == NULL)
        return -1;
    long v = -1;
    for (const char *p = at + strlen(key); p < text + n && *p >= '0' && *p <= '9'; p++)
        v = (v < 0 ? 0 : v * 10) + (*p - '0');
    return v;
}

/* libcurl 7.88's informational lines that tell a request the server never processed from one
 * it may have (the texts are 7.88's, including its spelling; this runs only on libcurl < 8.2):
 *   "Using Stream ID: 3 (easy handle ...)"            the stream the request took
 *   "recveived GOAWAY, error=0, last_stream=1"        to the transfer that read the GOAWAY
 *   "REFUSED_STREAM, retrying a fresh connect"        libcurl is about to send it again */
static int read_curl_text(CURL *h, curl_infotype type, char *text, size_t n, void *userdata)
{
    (void)h;
    rx_transfer *t = userdata;
    if (type != CURLINFO_TEXT)
        return 0;
    if (text_starts(text, n, "Using Stream ID: ")) {
        t->h2_stream_id = number_after(text, n, "Using Stream ID: ");
        /* what was read before belongs to an earlier attempt */
        t->goaway_last_stream = -1;
        t->refused_retry = 0;
    } else if (text_starts(text, n, "REFUSED_STREAM")) {
        t->refused_retry = 1;
    } else if (find_text(text, n, "GOAWAY") != NULL) {
        /* Only the transfer that read it is told: the gate tells the connection's others. */
        t->goaway_last_stream = number_after(text, n, "last_stream=");
        rx_gate_note_goaway(t, t->conn_port, t->goaway_last_stream);
    }
    return 0;
}

int rx_transfer_unprocessed(const rx_transfer *t)
{
    return t->refused_retry || (t->h2_stream_id > 0 && t->goaway_last_stream >= 0 &&
                                t->h2_stream_id > t->goaway_last_stream);
}

/* libcurl before 8.2 (HTTP/2 rewritten in 8.0-8.1.1) loses a response that an HTTP/2 server
 * sends before it has the whole request body and then ends the stream with RST_STREAM
 * NO_ERROR (bug 3 in h2gate.h). Having received nothing, it takes the connection for dead
 * and sends the request again if it can rewind the body, which it always can for
 * POSTFIELDS: measured, 500 POSTs of 200 kB to nginx over h2c reached it 538 times. */
static int resends_answered_requests(void)
{
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = curl_version_info(CURLVERSION_NOW)->version_num < 0x080200;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* A request libcurl must not send twice on its own: not idempotent, over HTTP/2, on a libcurl
 * that would. Its whole body goes through on_read_whole and libcurl's text is read for it. */
static int guarded_against_resends(const rx_transfer *t)
{
    return t->http_version != RX_HTTP_1_1 && !rx_method_is_idempotent(t->method) &&
           resends_answered_requests();
}

void rx_transfer_begin_attempt(rx_transfer *t)
{
    t->error_text[0] = '\0';
    t->content_length = -1;
    t->body_received = 0;
    t->body_sent = 0;
    t->upload_finished = 0;
}

int rx_transfer_uploading(const rx_transfer *t)
{
    if (t->upload_stream)
        return !t->upload_finished;
    return t->has_body && t->body_len > 64 * 1024 && t->uploaded < (int64_t)t->body_len;
}

/* Two Content-Length headers that disagree make the response's framing ambiguous (RFC 9112
 * section 6.3): reading with either one can desynchronise a kept-alive connection. libcurl 7.88
 * silently uses the last one, so the header callback refuses such responses itself. */
static int content_length_conflicts(rx_transfer *t, const char *line, size_t n)
{
    static const char name[] = "content-length:";
    if (n < sizeof name - 1 || strncasecmp(line, name, sizeof name - 1) != 0)
        return 0;
    int64_t value = 0;
    int digits = 0;
    for (size_t i = sizeof name - 1; i < n; i++) {
        char c = line[i];
        if (c >= '0' && c <= '9') {
            if (value > (INT64_MAX - 9) / 10)
                return 1; /* absurd length: refuse rather than overflow */
            value = value * 10 + (c - '0');
            digits++;
        } else if (c == ',' && digits) {
            /* "Content-Length: 5, 5" is one header carrying a list: each must agree. */
            if (t->content_length >= 0 && t->content_length != value)
                return 1;
            t->content_length = value;
            value = 0;
            digits = 0;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            return 0; /* not a number: curl reports that itself */
        }
    }
    if (!digits)
        return 0;
    if (t->content_length >= 0 && t->content_length != value)
        return 1;
    t->content_length = value;
    return 0;
}

/* The status code of a status line ("HTTP/1.1 200 OK", "HTTP/2 200"), 0 if unreadable. */
static long parse_status(const char *line, size_t n)
{
    size_t i = 5;
    while (i < n && line[i] != ' ')
        i++;
    long code = 0;
    for (i++; i < n && line[i] >= '0' && line[i] <= '9' && code < 1000; i++)
        code = code * 10 + (line[i] - '0');
    return code;
}

/* The blank line after the final (non-1xx) header block: status and headers are final. */
static void headers_complete(rx_transfer *t)
{
    long status = 0, version = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(t->easy, CURLINFO_HTTP_VERSION, &version);
    if (!t->stream) {
        t->headers_done = 1;
        return;
    }
    pthread_mutex_lock(&t->stream_lock);
    t->status = status;
    t->http_version_used = (int)version;
    t->headers_done = 1;
    int push = notify_consumer_locked(t);
    pthread_mutex_unlock(&t->stream_lock);
    if (push)
        rx_cq_push(t->cq, t);
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
    rx_transfer *t = userdata;
    size_t n = size * nmemb;
    t->last_activity_ms = rx_loop_now_ms;
    if (t->headers_done)
        return n; /* trailers after a chunked body: not part of the response headers */
    if (t->origin != NULL)
        rx_gate_opener_ready(t); /* the first response came: the server's SETTINGS did too */
    /* A status line starts a new response (after a 1xx): keep only the final block. */
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        rx_buffer_clear(&t->headers);
        t->content_length = -1;
        t->block_status = parse_status(data, n);
    } else if ((n == 2 && data[0] == '\r' && data[1] == '\n') || (n == 1 && data[0] == '\n')) {
        if (t->block_status >= 200 || t->block_status == 101) {
            if (rx_buffer_append(&t->headers, data, n) != 0) {
                t->own_error = RX_E_NOMEM;
                return 0;
            }
            headers_complete(t);
            return n;
        }
    } else if (content_length_conflicts(t, data, n)) {
        t->own_error = RX_E_BAD_FRAMING;
        return 0;
    }
    if (t->headers.len + n > RX_MAX_HEADER_BYTES) {
        t->own_error = RX_E_HEADERS_TOO_LARGE;
        return 0;
    }
    if (rx_buffer_append(&t->headers, data, n) != 0) {
        t->own_error = RX_E_NOMEM;
        return 0;
    }
    return n;
}

/* A new socket is about to connect: the transfer left the pool queue. */
static int on_sockopt(void *userdata, curl_socket_t fd, curlsocktype purpose)
{
    rx_transfer *t = userdata;
    if (t->phase == RX_PHASE_WAITING)
        t->phase = RX_PHASE_CONNECTING;
    return CURL_SOCKOPT_OK;
}

/* The connection is ready (new or reused) and the request is about to go out. */
static int on_prereq(void *userdata, char *conn_primary_ip, char *conn_local_ip,
                     int conn_primary_port, int conn_local_port)
{
    rx_transfer *t = userdata;
    t->phase = RX_PHASE_EXCHANGING;
    t->last_activity_ms = rx_loop_now_ms;
    if (t->requests_started > 0 && guarded_against_resends(t) && !rx_transfer_unprocessed(t)) {
        /* libcurl is about to send it again on its own ("Connection died, retrying"), which
         * for a body it has not begun to send needs no rewind, so on_seek_whole is not asked.
         * The server may have acted on it: stop here (see resends_answered_requests). */
        t->resend_refused = 1;
        return CURL_PREREQFUNC_ABORT;
    }
    t->requests_started++;
    t->conn_port = conn_local_port;
    if (t->origin != NULL && (t->has_body || t->upload_stream))
        rx_gate_hold_request(t, conn_local_port); /* see bug 3 in h2gate.h */
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

int rx_transfer_setup(rx_transfer *t, CURL *h, CURLSH *share)
{
    t->easy = h;
    rx_transfer_begin_attempt(t);
    int guarded = guarded_against_resends(t);

    /* Headers: an empty "Expect:" stops curl's 100-continue wait on uploads. */
    struct curl_slist *list = curl_slist_append(NULL, "Expect:");
    if (list == NULL)
        goto fail;
    t->header_list = list;
    if (t->has_body && !t->has_content_type) {
        /* With POSTFIELDS curl adds "Content-Type: application/x-www-form-urlencoded" unless
         * told otherwise; an empty "Content-Type:" removes it (httpx sends none either). */
        struct curl_slist *next = curl_slist_append(t->header_list, "Content-Type:");
        if (next == NULL)
            goto fail;
        t->header_list = next;
    }
    for (size_t off = 0; off < t->header_lines.len;) {
        const char *line = t->header_lines.data + off;
        struct curl_slist *next = curl_slist_append(t->header_list, line);
        if (next == NULL)
            goto fail;
        t->header_list = next;
        off += strlen(line) + 1;
    }

    SET(CURLOPT_PRIVATE, t);
    SET(CURLOPT_URL, t->url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L); /* redirects are followed in Python, hop by hop */
    SET(CURLOPT_PATH_AS_IS, 1L);     /* the Python layer already normalised the URL */
    SET(CURLOPT_PROXY, "");          /* no proxy from the environment behind the caller's back */
    SET(CURLOPT_HTTPHEADER, t->header_list);
    SET(CURLOPT_SHARE, share);
    SET(CURLOPT_PIPEWAIT, 1L);
    SET(CURLOPT_ERRORBUFFER, t->error_text);
    /* Bodies are handed over as received: the Python layer undoes Content-Encoding, so that it
     * can check the compressed stream really ended (libcurl 7.88 accepts a truncated gzip body
     * as complete) and so that `iter_raw()` has the bytes as sent. The Accept-Encoding header
     * is the caller's to send, too. */
    SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);

    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, t);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
    SET(CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    SET(CURLOPT_SOCKOPTDATA, t);
    SET(CURLOPT_PREREQFUNCTION, on_prereq);
    SET(CURLOPT_PREREQDATA, t);
    if (t->has_body && t->write_timeout_ms >= 0 && t->body_len > 64 * 1024) {
        /* Only large uploads pay for progress callbacks. */
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, t);
        SET(CURLOPT_NOPROGRESS, 0L);
    }

    if (t->connect_timeout_ms >= 0)
        /* curl treats 0 as "default (300 s)"; 1 ms is the closest to "immediately". */
        SET(CURLOPT_CONNECTTIMEOUT_MS, t->connect_timeout_ms ? t->connect_timeout_ms : 1L);
    else
        SET(CURLOPT_CONNECTTIMEOUT_MS, (long)INT32_MAX);

    switch (t->http_version) {
    case RX_HTTP_2_TLS: SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS); break;
    case RX_HTTP_2_PRIOR_KNOWLEDGE:
        SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
        break;
    default: SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1); break;
    }

    /* A reset handle verifies peer and host against libcurl's default CA store. */
    if (t->tls != NULL && rx_tls_apply(t->tls, h) != 0)
        goto fail;

    /* Method and body. curl picks GET/POST itself; anything else is a custom request. */
    int is_get = strcmp(t->method, "GET") == 0;
    int is_post = strcmp(t->method, "POST") == 0;
    if (strcmp(t->method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (t->upload_stream) {
        /* A fed body: curl pulls it through on_read. UPLOAD would make the method PUT, so the
         * method is always named; an unknown length means chunked on HTTP/1.1. */
        SET(CURLOPT_UPLOAD, 1L);
        SET(CURLOPT_READFUNCTION, on_read);
        SET(CURLOPT_READDATA, t);
        SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)t->upload_length);
        SET(CURLOPT_CUSTOMREQUEST, t->method);
    } else if (t->has_body && guarded) {
        /* Never sent twice: a request that is not idempotent goes out through on_read_whole,
         * which libcurl may rewind only to resend a request the server never processed
         * (on_seek_whole); where it would have resent any other, the transfer fails. */
        SET(CURLOPT_UPLOAD, 1L);
        SET(CURLOPT_READFUNCTION, on_read_whole);
        SET(CURLOPT_READDATA, t);
        SET(CURLOPT_SEEKFUNCTION, on_seek_whole);
        SET(CURLOPT_SEEKDATA, t);
        SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)t->body_len);
        SET(CURLOPT_CUSTOMREQUEST, t->method);
    } else if (t->has_body) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)t->body_len);
        SET(CURLOPT_POSTFIELDS, t->body ? t->body : "");
        if (!is_post)
            SET(CURLOPT_CUSTOMREQUEST, t->method);
    } else if (!is_get) {
        SET(CURLOPT_CUSTOMREQUEST, t->method);
    }

    t->h2_stream_id = 0;
    t->goaway_last_stream = -1;
    t->refused_retry = 0;
    if (guarded) {
        /* Whether the server processed such a request, libcurl 7.88 says only in text:
         * read_curl_text(). Verbose text costs about 1.5 us a request (measured on GETs). */
        SET(CURLOPT_DEBUGFUNCTION, read_curl_text);
        SET(CURLOPT_DEBUGDATA, t);
        SET(CURLOPT_VERBOSE, 1L);
    }
    return 0;

fail:
    return RX_E_NOMEM;
}

#undef SET

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
    return http_version_name(t->http_version_used);
}

/* An HTTP/2 request whose body was still going out when its stream ended without a response
 * (see resends_answered_requests() and bug 3 in h2gate.h): libcurl's own words for it are
 * "stream N closed" (CURLE_HTTP2_STREAM with no message) or, where it wanted to send the
 * request again, "necessary data rewind wasn't possible". Neither says what happened. */
static int stream_ended_while_uploading(const rx_transfer *t, CURLcode result)
{
    if (t->own_error || t->headers.len != 0 || t->origin == NULL ||
        !(t->upload_stream || t->upload_reads > 0))
        return 0;
    return result == CURLE_SEND_FAIL_REWIND ||
           (result == CURLE_HTTP2_STREAM && t->error_text[0] == '\0' && !t->upload_finished);
}

void rx_transfer_collect(rx_transfer *t, CURLcode result)
{
    CURL *h = t->easy;
    if (t->own_error)
        t->error = t->own_error;
    else if (result == CURLE_OPERATION_TIMEDOUT)
        t->error = RX_E_CONNECT_TIMEOUT; /* the only timeout curl itself enforces for us */
    else
        t->error = (int)result;

    long status = 0, version = 0;
    curl_off_t total = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total);
    if (!t->stream || !t->headers_done) {
        /* A streaming consumer may be reading these already: they were set at headers_done. */
        t->status = status;
        t->http_version_used = (int)version;
    }
    t->total_time_us = total;
    /* Whatever the protocol layer concluded, a body shorter than its Content-Length is not a
     * complete response (no content decoding happens here, so the counts compare). */
    if (t->error == 0 && t->content_length >= 0 && t->body_received < t->content_length &&
        strcmp(t->method, "HEAD") != 0 && status != 204 && status != 304 && status >= 200) {
        t->error = RX_E_INCOMPLETE_BODY;
        snprintf(t->error_text, sizeof t->error_text,
                 "the response body ended after %lld of its %lld bytes (Content-Length)",
                 (long long)t->body_received, (long long)t->content_length);
    }
    if (t->error != 0 &&
        (t->resend_refused || (t->needs_new_connection && t->requests_started > 0 &&
                               !rx_method_is_idempotent(t->method) &&
                               !rx_transfer_unprocessed(t)))) {
        /* libcurl wanted to send it again; on_prereq or the gate (rx_gate_should_restart)
         * did not let it */
        t->error = RX_E_STREAM_ENDED_EARLY;
        snprintf(t->error_text, sizeof t->error_text,
                 "the HTTP/2 connection or stream ended after the %s request was sent and "
                 "before any response; it was not sent again, as it is not idempotent",
                 t->method);
    } else if (stream_ended_while_uploading(t, result)) {
        t->error = RX_E_STREAM_ENDED_EARLY;
        snprintf(t->error_text, sizeof t->error_text,
                 "the HTTP/2 stream ended with no response after libcurl took %zu bytes of "
                 "the request body: the server reset it, or answered early and libcurl %s "
                 "dropped that answer (fixed in libcurl 8); the request was not sent again",
                 t->body_sent, curl_version_info(CURLVERSION_NOW)->version);
    }
    if (t->error && t->error_text[0] == '\0' && t->error < RX_E_CANCELLED)
        snprintf(t->error_text, sizeof t->error_text, "%s", curl_easy_strerror(result));
}

void rx_transfer_detach(rx_transfer *t)
{
    curl_slist_free_all(t->header_list);
    t->header_list = NULL;
    t->easy = NULL;
}

void rx_transfer_finish(rx_transfer *t, int error, const char *text)
{
    /* Called when the transfer ends without curl's verdict (cancel, our timeouts, shutdown). */
    t->error = error;
    if (text != NULL)
        snprintf(t->error_text, sizeof t->error_text, "%s", text);
}

void rx_transfer_complete(rx_transfer *t)
{
    t->completed_us = rx_clock_us();
    __atomic_store_n(&t->state, RX_DONE, __ATOMIC_RELEASE);
    /* The semaphore is posted in both modes: an event loop that shuts down waits on it for the
     * transfers it cancelled, since their request bodies are borrowed until then. */
    if (t->stream || t->upload_stream) {
        pthread_mutex_lock(&t->stream_lock);
        t->consumer_waiting = 0;
        pthread_cond_broadcast(&t->stream_cond);
        pthread_mutex_unlock(&t->stream_lock);
    }
    if (t->cq != NULL)
        rx_cq_push(t->cq, t);
    sem_post(&t->done);
}

/* ---------------------------------------------------------------------------------------------
 * Streaming, consumer side (see transfer.h).
 */

static int stream_ready_locked(rx_transfer *t, int want_body)
{
    if (rx_transfer_is_done(t))
        return 1;
    return want_body ? t->body_buf.len > 0 : t->headers_done;
}

int rx_stream_ready(rx_transfer *t, int want_body, int arm)
{
    pthread_mutex_lock(&t->stream_lock);
    int ready = stream_ready_locked(t, want_body);
    if (!ready && arm)
        t->consumer_waiting = 1;
    pthread_mutex_unlock(&t->stream_lock);
    return ready;
}

static struct timespec deadline_after(long timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline); /* the condition variable's default clock */
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    return deadline;
}

/* Wait on stream_cond (lock held) until the deadline; 0, or ETIMEDOUT. */
static int cond_wait_locked(rx_transfer *t, long timeout_ms, const struct timespec *deadline)
{
    if (timeout_ms < 0)
        return pthread_cond_wait(&t->stream_cond, &t->stream_lock);
    return pthread_cond_timedwait(&t->stream_cond, &t->stream_lock, deadline);
}

int rx_stream_wait(rx_transfer *t, int want_body, long timeout_ms)
{
    struct timespec deadline = deadline_after(timeout_ms < 0 ? 0 : timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&t->stream_lock);
    while (!stream_ready_locked(t, want_body) && rc == 0)
        rc = cond_wait_locked(t, timeout_ms, &deadline);
    int ready = stream_ready_locked(t, want_body);
    pthread_mutex_unlock(&t->stream_lock);
    return ready ? 0 : ETIMEDOUT;
}

char *rx_stream_take(rx_transfer *t, size_t *len, int *resume)
{
    pthread_mutex_lock(&t->stream_lock);
    char *data = t->body_buf.len ? rx_buffer_steal(&t->body_buf, len) : NULL;
    if (data == NULL)
        *len = 0;
    *resume = t->paused;
    t->paused = 0;
    pthread_mutex_unlock(&t->stream_lock);
    return data;
}

/* ---------------------------------------------------------------------------------------------
 * Fed request bodies, feeder side (see transfer.h).
 */

static int upload_room_locked(rx_transfer *t)
{
    return rx_transfer_is_done(t) || t->upload_buf.len - t->upload_off < RX_UPLOAD_HIGH_WATER;
}

/* The transfer must be resumed if the read callback paused it for want of bytes. */
static int take_upload_pause_locked(rx_transfer *t)
{
    int paused = t->upload_paused;
    t->upload_paused = 0;
    return paused;
}

int rx_upload_feed(rx_transfer *t, const char *data, size_t len, int arm, int *resume)
{
    *resume = 0;
    pthread_mutex_lock(&t->stream_lock);
    if (rx_transfer_is_done(t)) {
        pthread_mutex_unlock(&t->stream_lock);
        return -1;
    }
    if (!upload_room_locked(t)) {
        if (arm)
            t->consumer_waiting = 1;
        pthread_mutex_unlock(&t->stream_lock);
        return 0;
    }
    if (t->upload_off > 0) {
        /* Slide the unsent tail to the front so the buffer does not creep forward. */
        size_t left = t->upload_buf.len - t->upload_off;
        memmove(t->upload_buf.data, t->upload_buf.data + t->upload_off, left);
        t->upload_buf.len = left;
        t->upload_off = 0;
    }
    int rc = rx_buffer_append(&t->upload_buf, data, len) == 0 ? 1 : -1;
    *resume = take_upload_pause_locked(t);
    pthread_mutex_unlock(&t->stream_lock);
    return rc;
}

int rx_upload_wait(rx_transfer *t, long timeout_ms)
{
    struct timespec deadline = deadline_after(timeout_ms < 0 ? 0 : timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&t->stream_lock);
    while (!upload_room_locked(t) && rc == 0)
        rc = cond_wait_locked(t, timeout_ms, &deadline);
    int ready = upload_room_locked(t);
    pthread_mutex_unlock(&t->stream_lock);
    return ready ? 0 : ETIMEDOUT;
}

void rx_upload_end(rx_transfer *t, int *resume)
{
    pthread_mutex_lock(&t->stream_lock);
    t->upload_eof = 1;
    *resume = take_upload_pause_locked(t);
    pthread_mutex_unlock(&t->stream_lock);
}
