/* The engine's timeouts: a binary min-heap of transfers on engine.deadline_ms (see deadlines.h). */
#include "deadlines.h"

#include "transfer_impl.h"

#include <stdlib.h>

static void heap_swap(rx_deadlines *e, long i, long j)
{
    rx_transfer *a = e->heap[i], *b = e->heap[j];
    e->heap[i] = b;
    e->heap[j] = a;
    b->engine.heap_slot = i + 1;
    a->engine.heap_slot = j + 1;
}

static int64_t key(const rx_deadlines *e, long i) { return e->heap[i]->engine.deadline_ms; }

static void heap_up(rx_deadlines *e, long i)
{
    while (i > 0) {
        long parent = (i - 1) / 2;
        if (key(e, parent) <= key(e, i))
            break;
        heap_swap(e, i, parent);
        i = parent;
    }
}

static void heap_down(rx_deadlines *e, long i)
{
    for (;;) {
        long l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->len && key(e, l) < key(e, m))
            m = l;
        if (r < e->len && key(e, r) < key(e, m))
            m = r;
        if (m == i)
            return;
        heap_swap(e, i, m);
        i = m;
    }
}

int rx_deadlines_add(rx_deadlines *e, rx_transfer *t, int64_t deadline_ms)
{
    if (e->len == e->cap) {
        long cap = e->cap ? e->cap * 2 : 64;
        rx_transfer **h = realloc(e->heap, (size_t)cap * sizeof *h);
        if (h == NULL)
            return -1;
        e->heap = h;
        e->cap = cap;
    }
    t->engine.deadline_ms = deadline_ms;
    t->engine.heap_slot = e->len + 1;
    e->heap[e->len++] = t;
    heap_up(e, e->len - 1);
    return 0;
}

void rx_deadlines_remove(rx_deadlines *e, rx_transfer *t)
{
    long i = t->engine.heap_slot - 1;
    if (i < 0)
        return;
    t->engine.heap_slot = 0;
    e->len--;
    if (i == e->len)
        return;
    e->heap[i] = e->heap[e->len];
    e->heap[i]->engine.heap_slot = i + 1;
    heap_up(e, i);
    heap_down(e, e->heap[i]->engine.heap_slot - 1);
}

rx_transfer *rx_deadlines_due(const rx_deadlines *e, int64_t now_ms)
{
    return e->len > 0 && key(e, 0) <= now_ms ? e->heap[0] : NULL;
}

int64_t rx_deadlines_first_key(const rx_deadlines *e) { return e->len > 0 ? key(e, 0) : -1; }

void rx_deadlines_rekey_first(rx_deadlines *e, int64_t deadline_ms)
{
    e->heap[0]->engine.deadline_ms = deadline_ms;
    heap_down(e, 0);
}

void rx_deadlines_free(rx_deadlines *e)
{
    free(e->heap);
    e->heap = NULL;
    e->len = e->cap = 0;
}
