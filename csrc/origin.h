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
 *     delivering it (rx_origin_should_wait).
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

/* An HTTP/2-capable transfer is about to be attached: 1 when it may go now, 0 when it joined
 * its origin's wait list, -1 when out of memory; each time, PIPEWAIT is set as the origin
 * needs it. */
int rx_origin_admit(rx_origins *all, rx_transfer *t);

/* libcurl reported the transfer done: 1 if it only failed because it was refused a socket
 * (see above), in which case it has joined its origin's wait list and must be detached from
 * the multi handle and not delivered; else 0 (also for transfers that are no origin's). */
int rx_origin_should_wait(rx_transfer *t);

/* The transfer is done for good (answered, failed, cancelled, timed out): forget it and let
 * one waiting transfer of its origin go. */
void rx_origin_forget(rx_origins *all, rx_transfer *t);

/* Transfers let go since the last call, linked through wait_next, oldest first. The engine
 * attaches each one (they pass rx_origin_admit again). */
rx_transfer *rx_origin_take_released(rx_origins *all);

/* From the prerequest callback: the transfer's request goes out on `fd` now. A request sent
 * while another on the same socket still waits for its answer shows the socket multiplexes,
 * so it speaks HTTP/2; with prior knowledge every socket does.
 * rx_origin_answer_started(): from the header callback, the final answer's headers are in
 * (over HTTP/2 when `http2`, which also marks the request's socket). */
void rx_origin_request_started(rx_transfer *t, curl_socket_t fd);
void rx_origin_answer_started(rx_transfer *t, int http2);

/* Whether the transfer is one of an origin's (HTTP/2-capable and admitted). */
static inline int rx_origin_tracks(const rx_transfer *t) { return t->h2.origin != NULL; }

/* The next transfer in the list rx_origin_take_released() returned. */
static inline rx_transfer *rx_origin_next_released(const rx_transfer *t)
{
    return t->h2.wait_next;
}

/* From the engine's socket callbacks (CURLOPT_OPENSOCKETFUNCTION, CLOSESOCKETFUNCTION), for
 * every transfer: whether t may open a new connection now (0: it was refused, see above); a
 * socket t opened (0, or -1 when out of memory: the engine closes it and fails the connect);
 * a socket about to close, maybe long after the transfer that opened it. */
int rx_origin_may_open_socket(rx_transfer *t);
int rx_origin_socket_opened(rx_transfer *t, curl_socket_t fd);
void rx_origin_socket_closing(rx_origins *all, curl_socket_t fd);

#endif
