/* The HTTP/1.1 gate (see gate.h). */
#include "gate.h"

#include "admission.h"
#include "transfer_impl.h"

#include <stddef.h>

enum { NOT_GATED = 0, QUEUED = 1, ATTACHED = 2 };

void rx_h1_gate_init(rx_h1_gate *g, long limit)
{
    g->limit = limit > 0 ? limit : 0;
    g->attached = 0;
    g->head = g->tail = NULL;
}

static int has_room(const rx_h1_gate *g) { return g->limit == 0 || g->attached < g->limit; }

int rx_h1_gate_enter(rx_h1_gate *g, rx_transfer *t)
{
    t->engine.gate_prev = t->engine.gate_next = NULL;
    /* Behind others that wait, even with room: first come, first served. */
    if (g->head == NULL && has_room(g)) {
        t->engine.gate = ATTACHED;
        g->attached++;
        return RX_ADMIT_NOW;
    }
    t->engine.gate = QUEUED;
    t->engine.gate_prev = g->tail;
    if (g->tail != NULL)
        g->tail->engine.gate_next = t;
    else
        g->head = t;
    g->tail = t;
    return RX_ADMIT_WAIT;
}

static void unqueue(rx_h1_gate *g, rx_transfer *t)
{
    rx_transfer *prev = t->engine.gate_prev, *next = t->engine.gate_next;
    if (prev != NULL)
        prev->engine.gate_next = next;
    else
        g->head = next;
    if (next != NULL)
        next->engine.gate_prev = prev;
    else
        g->tail = prev;
    t->engine.gate_prev = t->engine.gate_next = NULL;
}

void rx_h1_gate_leave(rx_h1_gate *g, rx_transfer *t)
{
    if (t->engine.gate == QUEUED)
        unqueue(g, t);
    else if (t->engine.gate == ATTACHED)
        g->attached--;
    t->engine.gate = NOT_GATED;
}

rx_transfer *rx_h1_gate_next(rx_h1_gate *g)
{
    rx_transfer *t = g->head;
    if (t == NULL || !has_room(g))
        return NULL;
    unqueue(g, t);
    t->engine.gate = ATTACHED;
    g->attached++;
    return t;
}
