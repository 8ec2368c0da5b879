/* A completion queue: where the loop thread hands finished transfers to one event loop.
 *
 * One queue per Python event loop (asyncio/uvloop loop or trio run). The loop thread appends a
 * finished transfer and raises the queue's notifier (platform.h: an eventfd on Linux, a pipe or
 * socket pair elsewhere) only when the queue goes from empty to non-empty, so a burst of N
 * completions costs the event loop one wake-up; the event loop then takes the whole list in
 * one rx_cq_drain() call. No GIL is involved on the C side.
 *
 * Reference counted: every transfer pointed at a queue holds a reference, so the queue
 * outlives whatever may still complete into it. Its owner lets go with rx_cq_close(), not
 * rx_cq_unref(): queued transfers hold the queue and the queue holds them, and only closing
 * breaks that cycle. */
#ifndef RX_COMPLETION_H
#define RX_COMPLETION_H

#include "platform.h"
#include "thread.h"

typedef struct rx_transfer rx_transfer;

typedef struct rx_completion_queue {
    rx_mutex lock;
    rx_transfer *head, *tail; /* linked through rx_transfer.cq_link.next */
    rx_notifier notifier;     /* its read_end is what the event loop watches */
    int refs;                 /* atomic */
    int closed;               /* guarded by lock: the owner has gone, pushes are dropped */
} rx_completion_queue;

/* NULL when out of memory or descriptors. */
rx_completion_queue *rx_cq_new(void);
void rx_cq_ref(rx_completion_queue *cq);
/* The last reference closes the notifier and frees the queue (transfers still queued are
 * released too). */
void rx_cq_unref(rx_completion_queue *cq);

/* The owner is done: release the transfers still queued, drop those that finish later, and
 * give up the owner's reference. */
void rx_cq_close(rx_completion_queue *cq);

/* Loop thread: append a delivered transfer, or a streaming one with news (the queue takes a
 * transfer reference), unless the queue is closed or the transfer is queued already. */
void rx_cq_push(rx_completion_queue *cq, rx_transfer *t);

/* Event loop: clear the notifier, then take every queued transfer (a list walked with
 * rx_cq_collect(), oldest first; the caller owns one reference to each). NULL if none. */
rx_transfer *rx_cq_drain(rx_completion_queue *cq);

/* Event loop: collect `t`, the head of a drained list: returns the transfer after it (NULL at
 * the end) and lets `t` be queued again. A streaming transfer is queued at most once at a
 * time, so a push that comes while it sits in a drained list is dropped: the drainer looks at
 * the transfer's state after collecting it. */
rx_transfer *rx_cq_collect(rx_transfer *t);

#endif
