/* The HTTP/2 gate: per-origin bookkeeping that works around three libcurl 7.88 HTTP/2 bugs.
 *
 * 1. Bursts open surplus connections. Transfers added while the first connection to an origin
 *    is still being set up each open a connection of their own, PIPEWAIT or not (200 requests
 *    gave 100 connections). So the first HTTP/2-capable transfer to an origin with no
 *    connection becomes its *opener*, and later ones are *parked* here until the opener's
 *    connection has carried its first response (so the server's SETTINGS, which come first,
 *    are known: released before that, transfers beyond curl's default of 100 streams would
 *    each open a connection again) or the opener ended; then they are attached and multiplex
 *    on it. If the opener fails to connect, they are released to try in parallel instead.
 *    Past the server's stream limit, libcurl 7.88 still opens further connections (up
 *    to the per-host cap, max_connections).
 *
 * 2. h2c prior knowledge breaks on reuse (curl issue #10634, fixed in 8.0): a transfer that
 *    asks for CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE and is given an existing connection stacks a
 *    second HTTP/2 layer on it and fails with "Error in the HTTP2 framing layer". So only a
 *    transfer that will open a new connection asks for prior knowledge; one that will reuse
 *    asks for CURL_HTTP_VERSION_2_0, which multiplexes on the existing HTTP/2 connection.
 *    Whether a connection to the origin exists is counted from libcurl's socket open/close
 *    callbacks. A reusing transfer must never open a connection itself: with
 *    CURL_HTTP_VERSION_2_0 that would be an HTTP/1.1 `Upgrade: h2c` request, which an
 *    h2c-only server does not understand. libcurl does want one when it retries a stream the
 *    server refused (RST_STREAM REFUSED_STREAM, or beyond a GOAWAY's last stream). So the
 *    open-socket callback refuses a socket to a reusing transfer; the transfer then fails to
 *    connect before anything was sent, and the engine starts it again as the opener of a new
 *    prior-knowledge connection (rx_gate_should_restart). Prior-knowledge engines also cap
 *    connections per host at one, so this only happens when the connection goes away.
 *
 * 3. An early response is lost. A server may answer a request before reading its body and then
 *    reset the stream with NO_ERROR (RFC 9113 section 8.1: "clients MUST NOT discard responses" for
 *    that reason). nginx does so for any location that does not read the body. libcurl 7.88
 *    discards the response it holds when it sees that reset, and then fails the body's send
 *    (CURLE_HTTP2_STREAM, "stream N closed") or, having received nothing, sends the request again
 *    (transfer.c makes sure it cannot: resends_answered_requests, and rx_gate_should_restart
 *    below). The race is won or lost inside one libcurl call: after sending a request's HEADERS,
 *    libcurl reads before it writes the body, and when the server was scheduled in between (2 CPUs,
 *    loopback: 1 POST in 10 to a local nginx over h2c) the complete response is already there. So a
 *    request with a body holds its connection's socket corked (TCP_CORK) from the prerequest
 *    callback until the loop pass ends: the server sees HEADERS and a body that fits one pass (the
 *    flow-control window and libcurl's 64 KiB upload buffer) together, and cannot answer before
 *    libcurl has sent them. A fed body of unknown length needs more passes (libcurl reads it once a
 *    pass, and its end takes one more), so its hold lasts while it makes progress, for up to
 *    RX_GATE_HOLD_PASSES passes, and never while the loop sleeps. What does not fit is exposed to
 *    the race as before; libcurl 8 does not have the bug.
 *
 * Loop thread only, like everything that touches libcurl. HTTP/1.1-only transfers never pass
 * through the gate. The gate assumes an engine's transfers all ask for the same HTTP version,
 * as they do with one engine per client: its connection counts only see connections opened by
 * gated transfers, and an h2c transfer must not be handed an idle HTTP/1.1 connection. */
#ifndef RX_H2GATE_H
#define RX_H2GATE_H

#include <curl/curl.h>

#include "transfer.h"

typedef struct rx_gate rx_gate;
typedef struct rx_origin rx_origin;

rx_gate *rx_gate_new(void);
void rx_gate_free(rx_gate *g);

/* A transfer is about to be attached. Returns 1 when it may go now (its easy handle's
 * CURLOPT_HTTP_VERSION has been adjusted), 0 when it was parked. -1: out of memory. */
int rx_gate_admit(rx_gate *g, rx_transfer *t);

/* After libcurl calls: the transfers whose wait is over, linked through park_next, in the
 * order they arrived. Each must be passed to rx_gate_admit() again (it may park again if
 * the opener failed and another takes its place). */
rx_transfer *rx_gate_take_released(rx_gate *g);

/* Called from the transfer's header callback: its first response is arriving. If it was its
 * origin's opener, the transfers parked behind it are released (taken by the engine with
 * rx_gate_take_released() once libcurl has returned: no libcurl call is made here). */
void rx_gate_opener_ready(rx_transfer *t);

/* A transfer finished because the gate refused it a socket (see bug 2): 1 if the engine
 * should detach it and admit it again (it will open a new connection), 0 to let it fail. */
int rx_gate_should_restart(rx_transfer *t);

/* A transfer is ending (completed, cancelled, timed out): forget it. */
void rx_gate_forget(rx_gate *g, rx_transfer *t);

/* From the prerequest callback of a gated transfer with a request body (bug 3): cork the
 * socket of its connection, found by the local port libcurl reports, until the loop pass ends. */
#define RX_GATE_MAX_HELD 64
#define RX_GATE_HOLD_PASSES 8
void rx_gate_hold_request(rx_transfer *t, int conn_local_port);

/* The loop pass ends: uncork (and so send) what rx_gate_hold_request() held, but for bodies
 * read by callback that are still making progress; everything when the loop is about to
 * sleep. */
void rx_gate_release_held(rx_gate *g, int everything);

/* A GOAWAY read by `t` on the connection whose local port is `port`: libcurl tells only the
 * transfer that read it, so pass its last stream id on to the origin's other transfers on
 * that connection, which libcurl retries as if their connection had died. */
void rx_gate_note_goaway(rx_transfer *t, int port, long last_stream);

/* Installed on each gated easy handle: count the sockets open to each origin. */
curl_socket_t rx_gate_open_socket(void *clientp, curlsocktype purpose,
                                  struct curl_sockaddr *address);
int rx_gate_close_socket(void *clientp, curl_socket_t fd);

#endif
