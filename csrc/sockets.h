/* The sockets libcurl asks the engine to watch, and their epoll registrations (whoever drives
 * the loop; see "Blocking callers drive an idle engine" in engine.h).
 *
 * A kept-alive connection's socket would otherwise cost two epoll_ctl calls per request: libcurl
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

typedef struct rx_socket_slot {
    int64_t readable_at_ms; /* when epoll last reported bytes to read; 0 = not since (re)use */
    uint8_t watched;        /* the events registered with epoll (EPOLLIN, EPOLLOUT) */
    uint8_t wanted;         /* the events libcurl asked for; 0 = none (parked if watched) */
    uint8_t connection;     /* opened by the engine (rx_sockets_opened): its close is heard of */
    uint8_t lasting;        /* lives as long as the engine (rx_sockets_lasting) */
} rx_socket_slot;

typedef struct rx_sockets {
    int epoll_fd;
    rx_socket_slot *slots; /* indexed by descriptor, grown on demand (rx_table_grow) */
    size_t len;
    long changes; /* epoll_ctl calls made: a statistic (rx_stat_add, stat.h) */
} rx_sockets;

void rx_sockets_init(rx_sockets *s, int epoll_fd);
void rx_sockets_free(rx_sockets *s);

/* libcurl wants `events` (EPOLLIN and/or EPOLLOUT, not 0) on fd. 0, or -1 if epoll refused. */
int rx_sockets_watch(rx_sockets *s, int fd, uint32_t events);
/* libcurl no longer wants fd (CURL_POLL_REMOVE): parked, or unregistered. */
void rx_sockets_unwatch(rx_sockets *s, int fd);
/* An event epoll reported for fd: 1 if it belongs to a parked socket (now unregistered) and
 * must not be passed on, else 0. Notes when the socket was readable (rx_sockets_readable_at). */
int rx_sockets_event(rx_sockets *s, int fd, uint32_t events, int64_t now_ms);
/* When epoll last reported fd readable, or 0. */
int64_t rx_sockets_readable_at(const rx_sockets *s, int fd);

/* Whether fd may be parked: a connection the engine opened, or a lasting descriptor. */
int rx_sockets_may_park(const rx_sockets *s, int fd);
/* fd, watched now, is libcurl's and stays open until the engine ends: it may be parked. */
void rx_sockets_lasting(rx_sockets *s, int fd);

/* A connection socket the engine opened / is about to close. */
void rx_sockets_opened(rx_sockets *s, int fd);
void rx_sockets_closing(rx_sockets *s, int fd);

#endif
