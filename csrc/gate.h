/* The HTTP/1.1 gate: no more HTTP/1.1 transfers in libcurl than the pool has connections.
 *
 * An HTTP/1.1 transfer holds a connection of its own from connect to end. When a client with
 * `max_connections` N has N of them in libcurl, the next one cannot run until one ends, and
 * libcurl's way of holding it back is costly: it tries to connect (a new connection struct,
 * the URL parsed into it, the pool searched and its limits checked), fails for want of a
 * connection and parks the transfer; each transfer that ends lets one parked transfer try
 * again, and each that then gets a connection lets another try, which fails. Measured with
 * 256 async tasks on the default 100 connections: 3.1 connect attempts per request, two of
 * them failed (docs/performance.md). The engine therefore queues the transfers beyond N
 * itself, first come first served, and attaches the next one as each attached one ends.
 *
 * The gate counts HTTP/1.1 transfers only (HTTP/2-capable ones are admitted by their origin,
 * origin.h, and may share a connection). It never holds back a transfer libcurl would have
 * run: N attached HTTP/1.1 transfers hold or wait for all N connections. A queued transfer
 * is still a started one, with its deadlines armed: the pool timeout runs while it waits.
 *
 * Loop thread only. */
#ifndef RX_GATE_H
#define RX_GATE_H

#include "transfer.h"

typedef struct rx_h1_gate {
    long limit;                /* max_connections; 0: no gate */
    long attached;             /* HTTP/1.1 transfers in libcurl */
    rx_transfer *head, *tail;  /* queued, oldest first, linked through t->engine.gate_* */
} rx_h1_gate;

void rx_h1_gate_init(rx_h1_gate *g, long limit);

/* The admission's verbs (admission.h, which defines RX_ADMIT_*), for HTTP/1.1 transfers.
 * rx_h1_gate_enter(): a started transfer: RX_ADMIT_NOW when it may be attached now (it is
 * counted), RX_ADMIT_WAIT when it was queued.
 * rx_h1_gate_next(): the oldest queued transfer if there is room for it now (it is counted),
 * else NULL.
 * rx_h1_gate_leave(): the transfer is finished (answered, failed, cancelled, timed out;
 * attached or still queued): its place is given up. Does nothing for a transfer the gate
 * never saw. */
int rx_h1_gate_enter(rx_h1_gate *g, rx_transfer *t);
rx_transfer *rx_h1_gate_next(rx_h1_gate *g);
void rx_h1_gate_leave(rx_h1_gate *g, rx_transfer *t);

#endif
