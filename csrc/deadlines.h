/* The engine's timeouts (loop thread only): which timeout applies to a transfer when, and the
 * heap of transfers with a deadline armed, earliest first.
 *
 * httpx's timeouts are per phase: pool (waiting for a connection, or an HTTP/2 stream),
 * connect (libcurl's CONNECTTIMEOUT_MS covers it), then read and write, each running from the
 * last byte moved in its direction (write while the request body is still going out, read
 * after); and a total one over all of them. rx_timeout_* decide, from the transfer's options
 * and the times its callbacks note (transfer.c), which deadline applies now.
 *
 * Keys are lazy: activity moves a transfer's real deadline later without touching the heap;
 * when an entry reaches the top too early, the engine re-keys it (rx_deadlines_rekey_first)
 * instead. A key may be early, never late. Each transfer carries its key and its place in
 * its `engine` sub-struct (deadline_ms; heap_slot, 0 when not in).
 */
#ifndef RX_DEADLINES_H
#define RX_DEADLINES_H

#include <stdint.h>

#include "transfer.h"

typedef struct rx_deadlines {
    rx_transfer **heap;
    long len, cap;
} rx_deadlines;

/* Arm a deadline for t; 0, or -1 when out of memory. */
int rx_deadlines_add(rx_deadlines *d, rx_transfer *t, int64_t deadline_ms);
/* Disarm (a no-op when not armed). */
void rx_deadlines_remove(rx_deadlines *d, rx_transfer *t);
/* The transfer with the earliest key if that key is at or before now_ms, else NULL. */
rx_transfer *rx_deadlines_due(const rx_deadlines *d, int64_t now_ms);
/* The earliest key, or -1 when none is armed. */
int64_t rx_deadlines_first_key(const rx_deadlines *d);
/* Give the earliest one a new, later key. */
void rx_deadlines_rekey_first(rx_deadlines *d, int64_t deadline_ms);
void rx_deadlines_free(rx_deadlines *d);

/* The transfer's first deadline, or -1 when it has no timeout. */
int64_t rx_timeout_first(const rx_transfer *t);
/* At `now`, if a timeout has run out, set the transfer's error to it and return 1; else return
 * 0 and set *next to when to look again (early, never late). */
int rx_timeout_check(rx_transfer *t, int64_t now, int64_t *next);
/* Bytes arrived on the transfer's connection at `when_ms` (before any callback saw them): the
 * read timeout runs from then. No effect while the request body is going out (the write
 * timeout is about the other direction). */
void rx_timeout_bytes_arrived(rx_transfer *t, int64_t when_ms);

#endif
