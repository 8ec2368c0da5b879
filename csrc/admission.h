/* Admission: whether a started transfer may go to libcurl now, or waits its turn.
 *
 * Two kinds of turn, one vocabulary. An HTTP/1.1 transfer holds a connection of its own, and
 * beyond max_connections it waits at the engine's gate (gate.h) for one to end. An
 * HTTP/2-capable transfer shares its origin's one connection, and beyond the server's stream
 * limit it waits for a stream (origin.h). The engine (engine.c) speaks only the verbs below;
 * each dispatches on the HTTP version asked for:
 *
 *   enter        a started transfer asks: RX_ADMIT_NOW (attach it), RX_ADMIT_WAIT (it waits
 *                its turn; its pool timeout runs), RX_ADMIT_NOMEM (finish it with that error)
 *   next         a waiting transfer whose turn came, with RX_ADMIT_NOW or RX_ADMIT_NOMEM;
 *                asked after every loop turn until it says NULL
 *   wait_again   libcurl reports it done only because it was refused a connection to an
 *                HTTP/2 origin that has one: it waits again (detach it, do not finish it)
 *   leave        it is finished (answered, failed, cancelled, timed out; attached or waiting):
 *                its place goes to the next; nothing for a transfer that never entered
 *
 * and for the connections an origin keeps count of, from the engine's socket callbacks and
 * the transfer's (HTTP/2 evidence), the origin's own functions under admission's name.
 *
 * Loop thread only. */
#ifndef RX_ADMISSION_H
#define RX_ADMISSION_H

#include <curl/curl.h>

#include "transfer_impl.h"

/* What enter and next answer. */
enum { RX_ADMIT_NOMEM = -1, RX_ADMIT_WAIT = 0, RX_ADMIT_NOW = 1 };

#include "gate.h"
#include "origin.h"

typedef struct rx_admission {
    rx_h1_gate h1;   /* HTTP/1.1 transfers beyond max_connections wait here */
    rx_origins *h2;  /* HTTP/2 origins: one connection each, the surplus waits for a stream */
} rx_admission;

/* 0, or -1 when out of memory. */
static inline int rx_admission_init(rx_admission *a, long max_connections)
{
    rx_h1_gate_init(&a->h1, max_connections);
    a->h2 = rx_origins_new();
    return a->h2 != NULL ? 0 : -1;
}

/* After libcurl's multi handle is gone: closing its connections reports to the origins. */
static inline void rx_admission_free(rx_admission *a)
{
    rx_origins_free(a->h2);
    a->h2 = NULL;
}

static inline int rx_admission_enter(rx_admission *a, rx_transfer *t)
{
    return rx_transfer_http_mode(t) == RX_HTTP_1_1 ? rx_h1_gate_enter(&a->h1, t)
                                                     : rx_origin_enter(a->h2, t);
}

static inline rx_transfer *rx_admission_next(rx_admission *a, int *admitted)
{
    rx_transfer *t = rx_origin_next(a->h2, admitted);
    if (t != NULL)
        return t;
    *admitted = RX_ADMIT_NOW;
    return rx_h1_gate_next(&a->h1);
}

static inline int rx_admission_wait_again(rx_admission *a, rx_transfer *t)
{
    return rx_origin_wait_again(t);
}

static inline void rx_admission_leave(rx_admission *a, rx_transfer *t)
{
    if (rx_transfer_http_mode(t) == RX_HTTP_1_1)
        rx_h1_gate_leave(&a->h1, t);
    else
        rx_origin_leave(a->h2, t);
}

/* Connections (origin.h): whether `t` may open a new one now (0: refused, it will wait again);
 * a socket `t` opened (0, or -1 when out of memory: close it and fail the connect); a socket
 * about to close, maybe long after the transfer that opened it. */
static inline int rx_admission_may_open_socket(rx_transfer *t)
{
    return rx_origin_may_open_socket(t);
}
static inline int rx_admission_socket_opened(rx_transfer *t, curl_socket_t fd)
{
    return rx_origin_socket_opened(t, fd);
}
static inline void rx_admission_socket_closing(rx_admission *a, curl_socket_t fd)
{
    rx_origin_socket_closing(a->h2, fd);
}

/* HTTP/2 evidence, from the transfer's callbacks (origin.h): whether an origin keeps count of
 * `t`; its request goes out on `fd`; its final answer's headers are in (over HTTP/2 when
 * `http2`). */
static inline int rx_admission_tracks(const rx_transfer *t) { return rx_origin_tracks(t); }
static inline void rx_admission_request_started(rx_transfer *t, curl_socket_t fd)
{
    rx_origin_request_started(t, fd);
}
static inline void rx_admission_answer_started(rx_transfer *t, int http2)
{
    rx_origin_answer_started(t, http2);
}

#endif
