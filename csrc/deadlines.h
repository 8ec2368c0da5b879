/* The engine's timeouts (loop thread only): transfers with a deadline armed, earliest first.
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

#endif
