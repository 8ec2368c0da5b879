/* Drives the C engine directly (no Python) so valgrind/ASan see only our code and libcurl.
 *
 *   engine_test BASE_URL H2_URL   the suite's ASGI server, and its scripted h2c server
 *
 * Exits 0 when every check passed; prints the failed check otherwise. Built and run under
 * valgrind by tests/engine/test_engine_memory.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <process.h>
#include <winsock2.h> /* SOL_SOCKET, SO_KEEPALIVE */
#define getpid _getpid
#else
#include <sys/socket.h>
#include <unistd.h>
#endif

#include "engine.h"
#include "load.h"
#include "platform.h"
#include "thread.h"
/* Three white-box checks look inside a transfer: the header lines the setters wrote, a
 * stream's pause flag and a fed body's buffer. Everything else goes through transfer.h. */
#include "transfer_impl.h"

#include "check.h"

static const char *base;

/* Each check group names itself first, so a run that hangs (under an emulator, say) shows
 * where. */
#define STEP(call)                                                                                 \
    do {                                                                                           \
        printf("step: %s\n", #call);                                                               \
        call;                                                                                      \
    } while (0)

static void sleep_ms(long ms) { rx_sleep_us((int64_t)ms * 1000); }

/* The options make() gives: 5 s timeouts but the read timeout, HTTP/1.1, no body. */
static rx_request_options options_with(long read_timeout_ms)
{
    rx_request_options o;
    rx_request_options_init(&o);
    o.connect_timeout_ms = o.write_timeout_ms = o.pool_timeout_ms = 5000;
    o.read_timeout_ms = read_timeout_ms;
    return o;
}

static rx_transfer *make_with(const char *method, const char *path, const rx_request_options *o)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", base, path);
    rx_transfer *t = rx_transfer_new();
    rx_transfer_set_method(t, method, strlen(method));
    rx_transfer_set_url(t, url, strlen(url));
    rx_transfer_add_header(t, "Accept", 6, "*/*", 3);
    rx_transfer_set_options(t, o);
    return t;
}

static rx_transfer *make(const char *method, const char *path, long read_timeout_ms)
{
    rx_request_options o = options_with(read_timeout_ms);
    return make_with(method, path, &o);
}

/* The response of a delivered transfer. */
static const rx_response *result(const rx_transfer *t) { return rx_transfer_response(t); }

/* Whether its body holds `needle` (the body is taken); *len is the body's length. */
static int body_contains(rx_transfer *t, const char *needle, size_t *len)
{
    char *body = rx_transfer_take_body(t, len);
    size_t n = strlen(needle);
    int found = 0;
    for (size_t at = 0; body != NULL && at + n <= *len && !found; at++)
        found = memcmp(body + at, needle, n) == 0;
    rx_buffer_free_stolen(body);
    return found;
}

static void finish(rx_transfer *t)
{
    size_t len;
    rx_buffer_free_stolen(rx_transfer_take_body(t, &len));
    rx_transfer_unref(t);
}

static void sequential_gets(rx_engine *e, int n)
{
    for (int i = 0; i < n; i++) {
        rx_transfer *t = make("GET", "/json", 5000);
        CHECK(rx_engine_submit(e, t) == 0, "submit");
        rx_transfer_wait(t, -1);
        const rx_response *r = result(t);
        CHECK(r->error == 0, "GET error %d: %s", r->error, r->error_text);
        CHECK(r->status == 200, "GET status %ld", r->status);
        size_t len;
        body_contains(t, "", &len);
        CHECK(len > 0, "GET body empty");
        finish(t);
    }
}

static void post_body(rx_engine *e)
{
    static const char body[] = "{\"hello\": \"engine\"}";
    rx_request_options o = options_with(5000);
    o.body = body;
    o.body_len = sizeof body - 1;
    o.has_body = 1;
    rx_transfer *t = make_with("POST", "/echo", &o);
    rx_engine_submit(e, t);
    rx_transfer_wait(t, -1);
    const rx_response *r = result(t);
    CHECK(r->error == 0 && r->status == 200, "POST %d %ld", r->error, r->status);
    size_t len;
    CHECK(body_contains(t, "engine", &len), "POST body not echoed");
    finish(t);
}

static void concurrent(rx_engine *e, int n)
{
    rx_transfer *ts[64];
    for (int i = 0; i < n; i++) {
        ts[i] = make("GET", "/json", 5000);
        rx_engine_submit(e, ts[i]);
    }
    for (int i = 0; i < n; i++) {
        rx_transfer_wait(ts[i], -1);
        const rx_response *r = result(ts[i]);
        CHECK(r->error == 0 && r->status == 200, "concurrent %d: %d", i, r->error);
        finish(ts[i]);
    }
}

static void cancel_in_flight(rx_engine *e)
{
    rx_transfer *t = make("GET", "/slow?delay=5", -1);
    rx_engine_submit(e, t);
    sleep_ms(100);
    rx_engine_cancel(e, t);
    rx_engine_cancel(e, t); /* twice: must be harmless */
    rx_transfer_wait(t, -1);
    CHECK(result(t)->error == RX_E_CANCELLED, "cancel gave %d", result(t)->error);
    rx_engine_cancel(e, t); /* after completion: harmless */
    finish(t);
}

static void read_timeout(rx_engine *e)
{
    rx_transfer *t = make("GET", "/slow?delay=3", 300);
    rx_engine_submit(e, t);
    rx_transfer_wait(t, -1);
    CHECK(result(t)->error == RX_E_READ_TIMEOUT, "read timeout gave %d", result(t)->error);
    finish(t);
}

static void refused(rx_engine *e)
{
    rx_transfer *t = rx_transfer_new();
    rx_transfer_set_method(t, "GET", 3);
    rx_transfer_set_url(t, "http://127.0.0.1:1/", 19);
    rx_engine_submit(e, t);
    rx_transfer_wait(t, -1);
    CHECK(result(t)->error == CURLE_COULDNT_CONNECT, "refused gave %d", result(t)->error);
    finish(t);
}

static void bad_input(void)
{
    rx_transfer *t = rx_transfer_new();
    CHECK(rx_transfer_add_header(t, "X-A", 3, "a\r\nb", 4) == RX_E_INVALID_HEADER, "CRLF value");
    CHECK(rx_transfer_add_header(t, "X A", 3, "a", 1) == RX_E_INVALID_HEADER, "space in name");
    CHECK(rx_transfer_set_method(t, "GE T", 4) == RX_E_INVALID_METHOD, "space in method");
    CHECK(rx_transfer_set_url(t, "http://a/\n", 10) == RX_E_INVALID_URL, "LF in URL");
    rx_transfer_unref(t);
}

/* Header names: every byte value, accepted exactly when it is an RFC 9110 token character
 * (defined here independently of request.c's table); values: CR, LF and NUL refused wherever
 * they are; what is accepted lands in header_lines as "Name: value" (or "Name;" for an empty
 * value) with a NUL after each line. */
static void header_validation(void)
{
    rx_transfer *t = rx_transfer_new();
    size_t expected_len = 0;
    for (int c = 0; c < 256; c++) {
        char name[3] = {'X', (char)c, 'Y'};
        int token = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                    (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
        int rc = rx_transfer_add_header(t, name, 3, "v", 1);
        CHECK(rc == (token ? 0 : RX_E_INVALID_HEADER), "name byte %d gave %d", c, rc);
        if (rc == 0) {
            CHECK(t->header_lines.len == expected_len + 7, "line length for byte %d", c);
            CHECK(memcmp(t->header_lines.data + expected_len, name, 3) == 0 &&
                      memcmp(t->header_lines.data + expected_len + 3, ": v", 4) == 0,
                  "line for byte %d", c);
            expected_len += 7;
        }
    }
    CHECK(rx_transfer_add_header(t, "", 0, "v", 1) == RX_E_INVALID_HEADER, "empty name");
    const char bad[] = {'\r', '\n', '\0'};
    for (int i = 0; i < 3; i++) {
        char value[5] = {'a', 'b', 'c', 'd', 'e'};
        for (int at = 0; at < 5; at++) {
            value[at] = bad[i];
            CHECK(rx_transfer_add_header(t, "X-V", 3, value, 5) == RX_E_INVALID_HEADER,
                  "byte %d at %d of the value accepted", bad[i], at);
            value[at] = 'a';
        }
    }
    CHECK(t->header_lines.len == expected_len, "a refused header left bytes behind");
    CHECK(rx_transfer_add_header(t, "X-Empty", 7, "", 0) == 0, "empty value");
    CHECK(t->header_lines.len == expected_len + 9 &&
              memcmp(t->header_lines.data + expected_len, "X-Empty;", 9) == 0,
          "empty value's line");
    rx_transfer_unref(t);
}

/* Async delivery: completions go to a queue whose eventfd fires once per batch. */
static void completion_queue(rx_engine *e, int n)
{
    rx_completion_queue *cq = rx_cq_new();
    rx_transfer *ts[64];
    for (int i = 0; i < n; i++) {
        ts[i] = make("GET", "/json", 5000);
        rx_transfer_set_completion_queue(ts[i], cq);
        rx_engine_submit(e, ts[i]);
    }
    /* One more that is cancelled right away, and one left in the queue undrained: the queue's
     * last reference must release it. */
    rx_transfer *cancelled = make("GET", "/slow?delay=5", -1);
    rx_transfer_set_completion_queue(cancelled, cq);
    rx_engine_submit(e, cancelled);
    rx_engine_cancel(e, cancelled);

    /* Watched as an event loop watches it: through a poller of the platform in use. */
    rx_poller *poller = rx_poller_new();
    CHECK(poller != NULL && rx_poller_set(poller, cq->notifier.read_end, RX_POLL_IN, 0) == 0,
          "cannot watch the completion queue");
    int seen = 0, wakeups = 0, saw_cancelled = 0;
    while (poller != NULL && seen < n + 1 && wakeups < 1000) {
        rx_poll_event ready;
        CHECK(rx_poller_wait(poller, &ready, 1, 5000) == 1 &&
                  ready.fd == cq->notifier.read_end && (ready.events & RX_POLL_IN),
              "completion queue never became readable");
        wakeups++;
        for (rx_transfer *t = rx_cq_drain(cq), *next; t != NULL; t = next) {
            next = rx_cq_collect(t);
            const rx_response *r = result(t);
            if (t == cancelled) {
                saw_cancelled = 1;
                CHECK(r->error == RX_E_CANCELLED, "cancelled async transfer gave %d", r->error);
            } else {
                CHECK(r->error == 0 && r->status == 200, "async transfer %d", r->error);
            }
            rx_transfer_unref(t); /* the queue's reference */
            seen++;
        }
    }
    CHECK(seen == n + 1, "drained %d of %d", seen, n + 1);
    CHECK(saw_cancelled, "cancelled transfer never completed");
    CHECK(wakeups <= seen, "more wake-ups (%d) than completions (%d)", wakeups, seen);
    rx_poller_free(poller);
    for (int i = 0; i < n; i++)
        finish(ts[i]);
    finish(cancelled);

    /* Left undrained: completes into the queue, then the queue's last unref releases it. */
    rx_transfer *left = make("GET", "/json", 5000);
    rx_transfer_set_completion_queue(left, cq);
    rx_engine_submit(e, left);
    rx_transfer_wait(left, -1); /* the semaphore is posted in queue mode too */
    rx_transfer_unref(left);
    rx_cq_close(cq);
}

/* A streamed body larger than the high-water mark, read slowly: the engine pauses and resumes
 * the transfer, never buffers much more than RX_STREAM_HIGH_WATER, and every byte arrives in
 * order. Then a stream closed early (cancelled mid-body) leaves the engine usable. */
static void streaming(rx_engine *e)
{
    const size_t total = 6 * 1024 * 1024;
    char path[64];
    snprintf(path, sizeof path, "/bytes/%zu", total);
    rx_request_options streamed = options_with(5000);
    streamed.stream = 1;
    rx_transfer *t = make_with("GET", path, &streamed);
    CHECK(rx_engine_submit(e, t) == 0, "submit stream");
    CHECK(rx_stream_wait(t, 0, 5000) == 0, "stream headers never arrived");
    const rx_response *r = result(t);
    CHECK(r->headers_done && r->status == 200, "stream status %ld", r->status);
    /* Take nothing until the buffer is full and the engine paused the transfer (bounded: the
     * server may be slow under valgrind). */
    int paused = 0;
    for (int i = 0; i < 2000 && !paused; i++) {
        rx_mutex_lock(&t->stream_lock);
        paused = t->paused;
        rx_mutex_unlock(&t->stream_lock);
        if (!paused)
            sleep_ms(5);
    }
    CHECK(paused, "a full stream buffer never paused the transfer");
    size_t received = 0, largest = 0;
    int mismatches = 0, resumes = 0;
    while (rx_stream_wait(t, 1, 5000) == 0) {
        size_t len;
        int resume;
        char *data = rx_stream_take(t, &len, &resume);
        if (resume) {
            resumes++;
            rx_engine_resume(e, t);
        }
        if (data == NULL) {
            if (rx_transfer_is_delivered(t))
                break;
            continue;
        }
        for (size_t i = 0; i < len; i++)
            mismatches += (unsigned char)data[i] != (received + i) % 251;
        received += len;
        largest = len > largest ? len : largest;
        rx_buffer_free_stolen(data);
    }
    CHECK(r->error == 0, "stream error %d: %s", r->error, r->error_text);
    CHECK(received == total, "stream received %zu of %zu", received, total);
    CHECK(mismatches == 0, "stream content differs in %d bytes", mismatches);
    CHECK(largest <= RX_STREAM_HIGH_WATER + CURL_MAX_WRITE_SIZE, "buffered %zu bytes", largest);
    CHECK(resumes > 0, "the paused transfer was never resumed");
    rx_transfer_wait(t, -1);
    rx_transfer_unref(t);

    rx_transfer *early = make_with("GET", path, &streamed);
    rx_engine_submit(e, early);
    CHECK(rx_stream_wait(early, 1, 5000) == 0, "early stream: no body");
    rx_engine_cancel(e, early);
    rx_transfer_wait(early, -1);
    r = result(early);
    CHECK(r->error == RX_E_CANCELLED || r->error == 0, "early close gave %d", r->error);
    size_t len;
    int resume;
    rx_buffer_free_stolen(rx_stream_take(early, &len, &resume));
    rx_transfer_unref(early);
}

/* A request body fed in pieces while the transfer runs, once chunked and once with a known
 * length: the feeder waits for room (bounded buffer) and the server sees every byte. */
static void fed_upload(rx_engine *e, int64_t declared)
{
    const size_t total = 3 * 1000 * 1000, piece = 1000 * 1000; /* pieces over the limit */
    char *chunk = malloc(piece);
    memset(chunk, 'u', piece);
    rx_request_options fed_body = options_with(5000);
    fed_body.upload_stream = 1;
    fed_body.upload_length = declared;
    rx_transfer *t = make_with("POST", "/upload-digest", &fed_body);
    CHECK(rx_engine_submit(e, t) == 0, "submit upload");
    size_t fed = 0;
    while (fed < total) {
        int resume;
        size_t offset = fed % piece; /* a piece may go in in parts (room below high water) */
        long rc = rx_upload_feed(t, chunk + offset, piece - offset, 0, &resume);
        if (resume)
            rx_engine_resume(e, t);
        if (rc < 0)
            break;
        if (rc == 0) {
            if (rx_upload_wait(t, 5000) != 0) {
                CHECK(0, "upload room never came");
                break;
            }
            continue;
        }
        fed += (size_t)rc;
    }
    int resume;
    rx_upload_end(t, &resume);
    if (resume)
        rx_engine_resume(e, t);
    rx_transfer_wait(t, -1);
    const rx_response *r = result(t);
    CHECK(r->error == 0, "upload error %d: %s", r->error, r->error_text);
    CHECK(r->status == 200, "upload status %ld", r->status);
    char expected[64];
    snprintf(expected, sizeof expected, "\"length\": %zu", total);
    size_t len;
    CHECK(body_contains(t, expected, &len), "upload digest: no %s in %zu bytes", expected, len);
    /* Bounded: never more than RX_UPLOAD_HIGH_WATER bytes wait (the allocation may round up
     * to the next doubling). */
    CHECK(t->upload_buf.cap <= 2 * RX_UPLOAD_HIGH_WATER, "upload buffer grew to %zu",
          t->upload_buf.cap);
    finish(t);
    free(chunk);
}

/* h2c with prior knowledge, a burst of transfers: they multiplex on one connection, and a
 * second burst reuses it (libcurl 7.88 switched a reused connection to HTTP/2 a second time and
 * failed; fixed in libcurl 8.0). */
static void h2c_burst(rx_engine *e, int n)
{
    rx_transfer *ts[64];
    if (e == NULL)
        return;
    rx_request_options h2c = options_with(5000);
    h2c.http_version = RX_HTTP_2_PRIOR_KNOWLEDGE;
    for (int i = 0; i < n; i++) {
        ts[i] = make_with("GET", "/json", &h2c);
        CHECK(rx_engine_submit(e, ts[i]) == 0, "submit h2c");
    }
    for (int i = 0; i < n; i++) {
        rx_transfer_wait(ts[i], -1);
        const rx_response *r = result(ts[i]);
        CHECK(r->error == 0, "h2c transfer %d error %d: %s", i, r->error, r->error_text);
        CHECK(r->status == 200, "h2c status %ld", r->status);
        CHECK(r->http_version_used == CURL_HTTP_VERSION_2_0, "h2c used version %d",
              r->http_version_used);
        finish(ts[i]);
    }
}

/* Streams the server never processed are sent again on a new connection by libcurl: one the
 * server refuses, and one beyond a GOAWAY's last stream id, a POST included (the engine lets
 * a POST be resent only then, see note_refused_stream in transfer.c). A POST answered before
 * its 256 KiB body went out, the stream then reset with NO_ERROR, gets that answer. */
static void h2c_restarts(const char *h2_url)
{
    char err[128], url[256];
    rx_limits limits = {.max_connections = 10, .max_keepalive = 5, .keepalive_expiry_s = 5};
    rx_engine *e = rx_engine_new(&limits, err, sizeof err);
    CHECK(e != NULL, "h2c engine: %s", err);
    if (e == NULL)
        return;
    static char big[256 * 1024];
    memset(big, 'x', sizeof big);
    static const struct {
        const char *method, *path;
        size_t body_len;
    } steps[] = {
        {"GET", "/ok", 0},
        {"GET", "/refuse-once?token=c1", 0},
        {"GET", "/ok", 0},
        {"GET", "/goaway-once?token=c2", 0},
        {"POST", "/ok", 100},
        {"POST", "/goaway-once?token=c3", 100},
        {"POST", "/answer-early", sizeof big},
        {"GET", "/ok", 0},
    };
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        /* Tokens are per process: the valgrind and ASan runs share one scripted server, which
         * refuses or GOAWAYs a token only the first time it sees it. */
        if (strstr(steps[i].path, "token=") != NULL)
            snprintf(url, sizeof url, "%s%s-%ld", h2_url, steps[i].path, (long)getpid());
        else
            snprintf(url, sizeof url, "%s%s", h2_url, steps[i].path);
        rx_transfer *t = rx_transfer_new();
        rx_transfer_set_method(t, steps[i].method, strlen(steps[i].method));
        rx_transfer_set_url(t, url, strlen(url));
        rx_request_options o = options_with(5000);
        o.http_version = RX_HTTP_2_PRIOR_KNOWLEDGE;
        if (steps[i].body_len > 0) {
            o.body = big;
            o.body_len = steps[i].body_len;
            o.has_body = 1;
        }
        rx_transfer_set_options(t, &o);
        CHECK(rx_engine_submit(e, t) == 0, "submit %s", steps[i].path);
        rx_transfer_wait(t, -1);
        const rx_response *r = result(t);
        CHECK(r->error == 0 && r->status == 200, "%s: error %d (%s), status %ld",
              steps[i].path, r->error, r->error_text, r->status);
        finish(t);
    }
    rx_engine_free(e);
}

static void close_with_transfer_in_flight(void)
{
    char err[128];
    rx_limits limits = {.max_connections = 10, .max_keepalive = 5, .keepalive_expiry_s = 5};
    rx_engine *e = rx_engine_new(&limits, err, sizeof err);
    rx_transfer *t = make("GET", "/slow?delay=5", -1);
    rx_engine_submit(e, t);
    sleep_ms(100);
    CHECK(rx_engine_close(e, 5000) == 0, "close did not join");
    CHECK(rx_transfer_is_delivered(t), "in-flight transfer not completed by close");
    CHECK(result(t)->error == RX_E_ENGINE_CLOSED, "close gave %d", result(t)->error);
    finish(t);
    /* A submit racing with (here: after) close is refused, not a use-after-free. */
    rx_transfer *late = make("GET", "/json", 5000);
    CHECK(rx_engine_submit(e, late) == RX_E_ENGINE_CLOSED, "submit after close accepted");
    rx_engine_cancel(e, late);
    CHECK(rx_engine_close(e, 5000) == 0, "second close");
    rx_transfer_unref(late);
    rx_engine_free(e);
}

/* The HTTP/1.1 gate (gate.c): with max_connections 2, twelve slow requests at once. Two go to
 * libcurl, the rest queue in the engine; of those, one is cancelled and one runs out of pool
 * timeout while queued, and the others are answered in turn. Then the engine is closed with
 * transfers still queued: each ends with RX_E_ENGINE_CLOSED, none leaks. */
static void h1_gate(void)
{
    char err[128];
    rx_limits limits = {.max_connections = 2, .max_keepalive = 2, .keepalive_expiry_s = 5};
    rx_engine *e = rx_engine_new(&limits, err, sizeof err);
    CHECK(e != NULL, "gate engine: %s", err);
    if (e == NULL)
        return;
    enum { N = 12, CANCELLED = 7, POOL_TIMED_OUT = 9 };
    rx_transfer *ts[N];
    for (int i = 0; i < N; i++) {
        rx_request_options o = options_with(5000);
        if (i == POOL_TIMED_OUT)
            o.pool_timeout_ms = 30; /* queued behind 9 others for about 0.2 s */
        ts[i] = make_with("GET", "/slow?delay=0.05", &o);
        CHECK(rx_engine_submit(e, ts[i]) == 0, "gate submit %d", i);
    }
    rx_engine_cancel(e, ts[CANCELLED]);
    for (int i = 0; i < N; i++) {
        rx_transfer_wait(ts[i], -1);
        int want = i == CANCELLED        ? RX_E_CANCELLED
                   : i == POOL_TIMED_OUT ? RX_E_POOL_TIMEOUT
                                         : 0;
        const rx_response *r = result(ts[i]);
        CHECK(r->error == want, "gate %d: error %d, wanted %d", i, r->error, want);
        CHECK(want != 0 || r->status == 200, "gate %d: status %ld", i, r->status);
        finish(ts[i]);
    }
    for (int i = 0; i < N; i++) {
        ts[i] = make("GET", "/slow?delay=5", -1);
        rx_engine_submit(e, ts[i]);
    }
    sleep_ms(100);
    CHECK(rx_engine_close(e, 5000) == 0, "gate close did not join");
    for (int i = 0; i < N; i++) {
        CHECK(rx_transfer_is_delivered(ts[i]), "gate %d not completed by close", i);
        CHECK(result(ts[i])->error == RX_E_ENGINE_CLOSED, "gate close %d gave %d", i,
              result(ts[i])->error);
        finish(ts[i]);
    }
    rx_engine_free(e);
}

/* A route (route.c): socket options and a local address applied to every connection, one
 * refused socket option failing the transfer with RX_E_SOCKET_OPTION, and a route with proxy
 * settings built and freed unused (its headers, credentials and TLS reference). */
static void routed(rx_engine *e)
{
    rx_route *route = rx_route_new("test-route", 10);
    CHECK(route != NULL, "route");
    int on = 1;
    CHECK(rx_route_add_sockopt(route, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == 0, "opt");
    route->local_interface = strdup("host!127.0.0.1");
    for (int i = 0; i < 3; i++) {
        rx_transfer *t = make("GET", "/json", 5000);
        rx_transfer_set_route(t, route);
        CHECK(rx_engine_submit(e, t) == 0, "submit");
        rx_transfer_wait(t, -1);
        const rx_response *r = result(t);
        CHECK(r->error == 0 && r->status == 200, "routed GET: %d %s", r->error, r->error_text);
        finish(t);
    }
    rx_route_unref(route);

    /* libcurl does not compare socket options before reusing a connection: a route with them
     * has an engine of its own (route.h), as HTTPTransport gives it. */
    char err[128];
    rx_limits limits = {.max_connections = 2, .max_keepalive = 1, .keepalive_expiry_s = 5};
    rx_engine *own = rx_engine_new(&limits, err, sizeof err);
    CHECK(own != NULL, "engine: %s", err);
    rx_route *refused_opt = rx_route_new("refused", 7);
    CHECK(rx_route_add_sockopt(refused_opt, SOL_SOCKET, 0x7fff, &on, sizeof on) == 0, "opt");
    rx_transfer *t = make("GET", "/json", 5000);
    rx_transfer_set_route(t, refused_opt);
    rx_route_unref(refused_opt); /* the transfer keeps it alive */
    CHECK(rx_engine_submit(own, t) == 0, "submit");
    rx_transfer_wait(t, -1);
    const rx_response *r = result(t);
    CHECK(r->error == RX_E_SOCKET_OPTION, "refused option: error %d", r->error);
    CHECK(strstr(r->error_text, "setsockopt") != NULL, "refused option text: %s", r->error_text);
    finish(t);
    rx_engine_free(own);

    rx_route *proxy = rx_route_new("proxy", 5);
    proxy->proxy_url = strdup("http://127.0.0.1:9");
    proxy->proxy_username = strdup("user");
    proxy->proxy_password = strdup("secret");
    const char *line = "Proxy-Authorization: Basic dXNlcjpzZWNyZXQ=";
    CHECK(rx_route_add_proxy_header(proxy, line, strlen(line)) == 0, "proxy header");
    CHECK(rx_route_add_proxy_header(proxy, "X-A: b\0c", 9) != 0, "a NUL in a proxy header");
    rx_tls *tls = rx_tls_new();
    rx_route_set_proxy_tls(proxy, tls);
    rx_tls_unref(tls);
    rx_route_unref(proxy);
}

/* Blocking callers drive an idle engine themselves (engine.h): alone, every request is driven
 * by its caller; with several threads, the driver role changes hands under the engine's mutex
 * while others submit, and each request still completes exactly once. ThreadSanitizer checks
 * the hand-over. */
static void drive_some(void *arg)
{
    rx_engine *e = arg;
    for (int i = 0; i < 40; i++) {
        rx_transfer *t = make("GET", "/json", 5000);
        if (!rx_engine_drive(e, t, 50))
            CHECK(rx_engine_submit(e, t) == 0, "submit");
        rx_transfer_wait(t, -1);
        rx_engine_drive_end(e);
        const rx_response *r = result(t);
        CHECK(r->error == 0 && r->status == 200, "driven GET: %d %ld %s", r->error, r->status,
              r->error_text);
        finish(t);
    }
}

static void callers_drive(rx_engine *e)
{
    rx_engine_stats before, after;
    rx_engine_get_stats(e, &before);
    drive_some(e);
    rx_engine_get_stats(e, &after);
    /* Alone and sequential: the loop thread parks within its linger, so nearly every request
     * is driven by this thread (the first may find the loop thread still lingering). */
    CHECK(after.driven - before.driven >= 35, "only %ld of 40 lone requests driven",
          after.driven - before.driven);

    rx_thread threads[4];
    for (int i = 0; i < 4; i++)
        CHECK(rx_thread_start(&threads[i], drive_some, e, 0) == 0, "thread");
    for (int i = 0; i < 4; i++)
        rx_thread_join(&threads[i], -1);
    rx_engine_get_stats(e, &after);
    CHECK(after.completed - before.completed == 200, "%ld completions for 200 requests",
          after.completed - before.completed);
}

/* Load runs (load.h): a counted run answers exactly that many, with a latency each; a timed
 * run stopped early ends with nothing in flight; a run whose requests fail counts the errors.
 * The template's transfer is never submitted itself. */
static void load_runs(rx_engine *e)
{
    rx_transfer *template = make("GET", "/json", 5000);
    rx_load *run = rx_load_new(e, template, 4, 40, 0);
    CHECK(run != NULL && rx_load_start(run) == 0, "load start");
    while (run != NULL && rx_load_wait(run, 50) != 0) {
    }
    rx_load_results r;
    if (run != NULL) {
        rx_load_results_of(run, &r);
        CHECK(r.completed == 40 && r.errors == 0, "load: %ld answered, %ld errors", r.completed,
              r.errors);
        CHECK(r.non_2xx_3xx == 0 && r.bytes > 40 * 20, "load: status or bytes");
        for (long i = 0; i < r.completed; i++)
            CHECK(r.latencies_us[i] > 0, "load: latency %ld is %lld", i,
                  (long long)r.latencies_us[i]);
        rx_load_free(run);
    }

    run = rx_load_new(e, template, 8, 0, 10000); /* 10 s, stopped after 100 ms */
    CHECK(run != NULL && rx_load_start(run) == 0, "timed load start");
    if (run != NULL) {
        CHECK(rx_load_wait(run, 100) != 0, "a 10 s run finished within 100 ms");
        rx_load_stop(run);
        CHECK(rx_load_wait(run, 5000) == 0, "a stopped run did not finish");
        rx_load_results_of(run, &r);
        CHECK(r.completed > 0 && r.errors == 0, "stopped load: %ld answered, %ld errors",
              r.completed, r.errors);
        rx_load_free(run);
    }
    rx_transfer_unref(template);

    rx_transfer *refused_template = rx_transfer_new();
    rx_transfer_set_method(refused_template, "GET", 3);
    rx_transfer_set_url(refused_template, "http://127.0.0.1:1/", 19);
    run = rx_load_new(e, refused_template, 2, 6, 0);
    CHECK(run != NULL && rx_load_start(run) == 0, "refused load start");
    if (run != NULL) {
        CHECK(rx_load_wait(run, 5000) == 0, "refused load did not finish");
        rx_load_results_of(run, &r);
        CHECK(r.completed == 0 && r.errors == 6 && r.error_kinds == 1 &&
                  r.error_codes[0] == CURLE_COULDNT_CONNECT && r.error_counts[0] == 6,
              "refused load: %ld answered, %ld errors, first code %d", r.completed, r.errors,
              r.error_kinds ? r.error_codes[0] : 0);
        rx_load_free(run);
    }
    rx_transfer_unref(refused_template);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s BASE_URL H2_URL\n", argv[0]);
        return 2;
    }
    base = argv[1];
    char names[64];
    if (rx_platform_select(getenv("REQUESTX_PLATFORM"), names, sizeof names) != 0) {
        fprintf(stderr, "REQUESTX_PLATFORM: this build has %s\n", names);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* line by line, even into a pipe */
    printf("platform: %s\n", rx_platform_name());
    curl_global_init(CURL_GLOBAL_ALL);

    char err[128];
    rx_limits limits = {.max_connections = 10, .max_keepalive = 5, .keepalive_expiry_s = 5};
    rx_engine *e = rx_engine_new(&limits, err, sizeof err);
    CHECK(e != NULL, "engine: %s", err);
    if (e == NULL)
        return 1;

    STEP(bad_input());
    STEP(header_validation());
    STEP(sequential_gets(e, 50));
    STEP(post_body(e));
    STEP(concurrent(e, 32));
    STEP(cancel_in_flight(e));
    STEP(read_timeout(e));
    STEP(refused(e));
    STEP(completion_queue(e, 32));
    STEP(streaming(e));
    STEP(fed_upload(e, -1));
    STEP(fed_upload(e, 3 * 1000 * 1000));
    STEP(routed(e));
    STEP(callers_drive(e));
    STEP(load_runs(e));
    /* An h2c client has an engine of its own, as every Client does. */
    rx_limits h2c_limits = {.max_connections = 10, .max_keepalive = 5, .keepalive_expiry_s = 5};
    rx_engine *h2c = rx_engine_new(&h2c_limits, err, sizeof err);
    CHECK(h2c != NULL, "h2c engine: %s", err);
    STEP(h2c_burst(h2c, 32));
    STEP(h2c_burst(h2c, 8)); /* again, on the connection the first burst left open */
    if (h2c != NULL)
        rx_engine_free(h2c);
    STEP(sequential_gets(e, 5)); /* the pool is healthy after all that */
    rx_engine_free(e);
    STEP(close_with_transfer_in_flight());
    STEP(h1_gate());
    STEP(h2c_restarts(argv[2]));

    CHECK(rx_transfer_live_count() == 0, "%ld transfers leaked", rx_transfer_live_count());
    CHECK(rx_buffer_live_count() == 0, "%ld buffers leaked", rx_buffer_live_count());
    CHECK(rx_engine_live_easy_handles() == 0, "%ld easy handles leaked",
          rx_engine_live_easy_handles());
    curl_global_cleanup();
    if (failures == 0)
        printf("engine_test: all checks passed\n");
    return failures ? 1 : 0;
}
