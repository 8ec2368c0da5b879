#include "completion.h"
#include "heap.h"

#include <stdlib.h>

#include "transfer_impl.h"

rx_completion_queue *rx_cq_new(void)
{
    rx_completion_queue *cq = rx_calloc(1, sizeof *cq);
    if (cq == NULL)
        return NULL;
    if (rx_notifier_open(&cq->notifier) != 0) {
        rx_free(cq);
        return NULL;
    }
    rx_mutex_init(&cq->lock);
    cq->refs = 1;
    return cq;
}

void rx_cq_ref(rx_completion_queue *cq) { __atomic_add_fetch(&cq->refs, 1, __ATOMIC_RELAXED); }

void rx_cq_unref(rx_completion_queue *cq)
{
    if (__atomic_sub_fetch(&cq->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    /* The last reference: the owner closed it (so nothing is queued) and no transfer points
     * at it any more. */
    rx_notifier_close(&cq->notifier);
    rx_mutex_destroy(&cq->lock);
    rx_free(cq);
}

void rx_cq_close(rx_completion_queue *cq)
{
    rx_mutex_lock(&cq->lock);
    cq->closed = 1;
    rx_transfer *t = cq->head;
    cq->head = cq->tail = NULL;
    rx_mutex_unlock(&cq->lock);
    while (t != NULL) {
        rx_transfer *next = t->cq_link.next;
        rx_transfer_unref(t); /* may drop the last reference to cq itself: not the owner's */
        t = next;
    }
    rx_cq_unref(cq);
}

void rx_cq_push(rx_completion_queue *cq, rx_transfer *t)
{
    rx_mutex_lock(&cq->lock);
    if (cq->closed) {
        rx_mutex_unlock(&cq->lock);
        return; /* nobody will drain it: the transfer is freed with its last reference */
    }
    /* `queued` is read and written only under the queue's lock. We wrote the news (state,
     * stream fields) before taking it; the drainer clears `queued` under it (rx_cq_collect) and
     * reads the news after. Either the drainer cleared it first (we queue the transfer again)
     * or it reads the news after our unlock. With bare atomics this is store buffering, where
     * release and acquire let both sides read the old value and the news is never drained. */
    if (t->cq_link.queued) {
        /* A streaming transfer notified already and not yet drained: one entry is enough,
         * the drainer looks at its current state. */
        rx_mutex_unlock(&cq->lock);
        return;
    }
    t->cq_link.queued = 1;
    t->cq_link.next = NULL;
    rx_transfer_ref(t);
    int was_empty = cq->head == NULL;
    if (was_empty)
        cq->head = t;
    else
        cq->tail->cq_link.next = t;
    cq->tail = t;
    rx_mutex_unlock(&cq->lock);
    if (was_empty) {
        /* As with the engine's command queue: the drainer clears the notifier before taking
         * the list, so a push after that finds the list empty and raises it again. */
        rx_notifier_raise(&cq->notifier);
    }
}

rx_transfer *rx_cq_drain(rx_completion_queue *cq)
{
    rx_notifier_clear(&cq->notifier); /* raised or not, look */
    rx_mutex_lock(&cq->lock);
    rx_transfer *head = cq->head;
    cq->head = cq->tail = NULL;
    rx_mutex_unlock(&cq->lock);
    return head;
}

rx_transfer *rx_cq_collect(rx_transfer *t)
{
    rx_completion_queue *cq = t->cq;
    rx_mutex_lock(&cq->lock); /* see rx_cq_push */
    rx_transfer *next = t->cq_link.next; /* before `queued` is cleared: a push relinks it */
    t->cq_link.queued = 0;
    rx_mutex_unlock(&cq->lock);
    return next;
}
