/* The sockets libcurl asks the engine to watch, and their registrations with its poller
 * (platform.h; whoever drives
 * the loop; see "Blocking callers drive an idle engine" in engine.h).
 *
 * A kept-alive connection's socket would otherwise cost two registration changes (epoll_ctl
 * calls on Linux) per request: libcurl
 * says CURL_POLL_REMOVE when a transfer ends and CURL_POLL_IN again when the next one reuses the
 * connection. A connection socket registered for reading only is therefore *parked* instead:
 * it stays registered, libcurl no longer wants it, and re-watching it for reading costs no call.
 * A parked socket that reports an event (the server closed the idle connection) is unregistered
 * then, once, and the event is not passed on.
 *
 * Parking is safe only for descriptors whose close we hear of, or a reused number would keep a
 * stale registration state: the engine opens and closes connection sockets itself, through
 * libcurl's CURLOPT_OPENSOCKETFUNCTION and CURLOPT_CLOSESOCKETFUNCTION (rx_sockets_opened,
 * rx_sockets_closing), and a parked socket is unregistered before it is closed. The one other
 * kind that is parked is a *lasting* descriptor (rx_sockets_lasting): libcurl's own wake-up
 * descriptor, which its multi handle makes once and closes only when the engine ends; libcurl
 * watches it while any transfer is alive, so a sequential client saw it added and removed at
 * every request. Any other descriptor (an older libcurl's resolver socket pair, made and closed
 * per lookup) is unregistered at once.
 */
#ifndef RX_SOCKETS_H
#define RX_SOCKETS_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"

typedef struct rx_socket_slot {
    int64_t readable_at_ms; /* when the poller last reported bytes to read; 0 = not since (re)use */
    uint8_t watched;        /* the events registered with the poller (RX_POLL_IN, RX_POLL_OUT) */
    uint8_t wanted;         /* the events libcurl asked for; 0 = none (parked if watched) */
    uint8_t connection;     /* opened by the engine (rx_sockets_opened): its close is heard of */
    uint8_t lasting;        /* lives as long as the engine (rx_sockets_lasting) */
} rx_socket_slot;

typedef struct rx_sockets {
    rx_poller *poller;
    rx_socket_slot *slots; /* indexed by descriptor, grown on demand (rx_table_grow) */
    size_t len;
    long changes; /* registration changes asked of the poller: a statistic (stat.h) */
} rx_sockets;

void rx_sockets_init(rx_sockets *s, rx_poller *poller);
void rx_sockets_free(rx_sockets *s);

/* libcurl wants `events` (RX_POLL_IN and/or RX_POLL_OUT, not 0) on fd. 0, or -1 if the poller
 * refused. */
int rx_sockets_watch(rx_sockets *s, rx_socket_t fd, unsigned events);
/* libcurl no longer wants fd (CURL_POLL_REMOVE): parked, or unregistered. */
void rx_sockets_unwatch(rx_sockets *s, rx_socket_t fd);
/* An event the poller reported for fd: 1 if it belongs to a parked socket (now unregistered) and
 * must not be passed on, else 0. Notes when the socket was readable (rx_sockets_readable_at). */
int rx_sockets_event(rx_sockets *s, rx_socket_t fd, unsigned events, int64_t now_ms);
/* When the poller last reported fd readable, or 0. */
int64_t rx_sockets_readable_at(const rx_sockets *s, rx_socket_t fd);

/* Whether fd may be parked: a connection the engine opened, or a lasting descriptor. */
int rx_sockets_may_park(const rx_sockets *s, rx_socket_t fd);
/* fd, watched now, is libcurl's and stays open until the engine ends: it may be parked. */
void rx_sockets_lasting(rx_sockets *s, rx_socket_t fd);

/* A connection socket the engine opened / is about to close. */
void rx_sockets_opened(rx_sockets *s, rx_socket_t fd);
void rx_sockets_closing(rx_sockets *s, rx_socket_t fd);

#endif
