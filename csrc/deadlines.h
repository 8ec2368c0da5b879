/* The engine's timeouts (loop thread only): transfers with a deadline armed, earliest first.
 *
 * Keys are lazy: activity moves a transfer's real deadline later without touching the heap;
 * when an entry reaches the top too early, the engine re-keys it (rx_deadlines_rekey_first)
 * instead. A key may be early, never late. Each transfer carries its key (deadline_ms) and
 * its place (heap_index, -1 when not in).
 */
#ifndef RX_DEADLINES_H
#define RX_DEADLINES_H

#include <stdint.h>

#include "transfer.h"

typedef struct rx_deadlines {
    rx_transfer **heap;
    long len, cap;
} rx_deadlines;

/* Arm t->deadline_ms; 0, or -1 when out of memory. */
int rx_deadlines_add(rx_deadlines *d, rx_transfer *t);
/* Disarm (a no-op when not armed). */
void rx_deadlines_remove(rx_deadlines *d, rx_transfer *t);
/* The transfer with the earliest key, or NULL. */
rx_transfer *rx_deadlines_first(const rx_deadlines *d);
/* Give the earliest one a new, later key. */
void rx_deadlines_rekey_first(rx_deadlines *d, int64_t deadline_ms);
void rx_deadlines_free(rx_deadlines *d);

#endif
