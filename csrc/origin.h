/* HTTP/2 origins: one connection per origin; requests beyond its stream limit wait for a stream.
 *
 * libcurl multiplexes HTTP/2 requests on a connection until the server's MAX_CONCURRENT_STREAMS
 * is reached, and then opens another connection to the same origin (libcurl 8.22, url.c:
 * "MAX_CONCURRENT_STREAMS reached, skip"). httpx, and what servers expect of a client, is one
 * connection per origin where the requests beyond the limit wait for a stream to end. Measured
 * on libcurl 8.22, 200 concurrent requests against hypercorn (100 streams), 20 runs each: without
 * the wait below, 9 to 14 runs of h2c GETs and 4 to 9 of TLS POSTs used 2 connections; with
 * it, none did (tests/test_h2_multiplexing.py checks for one). libcurl has no option for it
 * (CURLMOPT_MAX_HOST_CONNECTIONS is per multi handle, and an origin that falls back to
 * HTTP/1.1 by ALPN needs more than one connection), so the engine does it:
 *
 *   - The engine opens each socket for a transfer, which knows its origin, and asks
 *     rx_origin_may_open_socket first.
 *     Once a socket is known to speak HTTP/2 (prior knowledge, a request sent on it while
 *     another awaits its answer, or an answer that came over HTTP/2), a transfer of that
 *     origin that asks libcurl for a new socket is refused one: it fails to connect before
 *     anything was sent, and the engine puts it in its origin's wait list instead of
 *     finishing it (rx_origin_wait_again).
 *   - New transfers join the wait list directly while it is not empty (first come, first
 *     served). Each transfer of the origin that ends lets one waiting transfer go, with leave to
 *     open a connection if libcurl finds no free stream after all (the connection may be going
 *     away); when the origin's last HTTP/2 socket closes, all of them go.
 *
 * Loop thread only. HTTP/1.1-only transfers never come here. */
#ifndef RX_ORIGIN_H
#define RX_ORIGIN_H

#include <curl/curl.h>

#include "transfer_impl.h"

typedef struct rx_origins rx_origins;

rx_origins *rx_origins_new(void);
void rx_origins_free(rx_origins *all);

/* The admission's verbs (admission.h, which defines RX_ADMIT_*), for HTTP/2-capable
 * transfers.
 * rx_origin_enter(): a started transfer is about to be attached: RX_ADMIT_NOW when it may go
 * now, RX_ADMIT_WAIT when it joined its origin's wait list, RX_ADMIT_NOMEM; each time,
 * PIPEWAIT is set as the origin needs it.
 * rx_origin_next(): the oldest transfer let go from a wait list, entered again: NULL when
 * none is left, else the transfer and in *admitted RX_ADMIT_NOW or RX_ADMIT_NOMEM (those that
 * must wait again rejoined their wait list).
 * rx_origin_wait_again(): libcurl reported the transfer done: 1 if it only failed because it
 * was refused a socket (see above), in which case it has joined its origin's wait list and
 * must be detached from the multi handle and not finished; else 0 (also for transfers that
 * are no origin's).
 * rx_origin_leave(): the transfer is finished (answered, failed, cancelled, timed out): its
 * origin forgets it and lets one waiting transfer go. */
int rx_origin_enter(rx_origins *all, rx_transfer *t);
rx_transfer *rx_origin_next(rx_origins *all, int *admitted);
int rx_origin_wait_again(rx_transfer *t);
void rx_origin_leave(rx_origins *all, rx_transfer *t);

/* From the prerequest callback: the transfer's request goes out on `fd` now. A request sent
 * while another on the same socket still waits for its answer shows the socket multiplexes,
 * so it speaks HTTP/2; with prior knowledge every socket does.
 * rx_origin_answer_started(): from the header callback, the final answer's headers are in
 * (over HTTP/2 when `http2`, which also marks the request's socket). */
void rx_origin_request_started(rx_transfer *t, curl_socket_t fd);
void rx_origin_answer_started(rx_transfer *t, int http2);

/* Whether the transfer is one of an origin's (HTTP/2-capable and admitted). */
static inline int rx_origin_tracks(const rx_transfer *t) { return t->h2.origin != NULL; }

/* From the engine's socket callbacks (CURLOPT_OPENSOCKETFUNCTION, CLOSESOCKETFUNCTION), for
 * every transfer: whether t may open a new connection now (0: it was refused, see above); a
 * socket t opened (0, or -1 when out of memory: the engine closes it and fails the connect);
 * a socket about to close, maybe long after the transfer that opened it. */
int rx_origin_may_open_socket(rx_transfer *t);
int rx_origin_socket_opened(rx_transfer *t, curl_socket_t fd);
void rx_origin_socket_closing(rx_origins *all, curl_socket_t fd);

#endif
