/* The engine's timeouts: a binary min-heap of transfers on deadline_ms (see deadlines.h). */
#include "deadlines.h"

#include <stdlib.h>

static void heap_swap(rx_deadlines *e, long i, long j)
{
    rx_transfer *a = e->heap[i], *b = e->heap[j];
    e->heap[i] = b;
    e->heap[j] = a;
    b->heap_index = i;
    a->heap_index = j;
}

static void heap_up(rx_deadlines *e, long i)
{
    while (i > 0) {
        long parent = (i - 1) / 2;
        if (e->heap[parent]->deadline_ms <= e->heap[i]->deadline_ms)
            break;
        heap_swap(e, i, parent);
        i = parent;
    }
}

static void heap_down(rx_deadlines *e, long i)
{
    for (;;) {
        long l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->len && e->heap[l]->deadline_ms < e->heap[m]->deadline_ms)
            m = l;
        if (r < e->len && e->heap[r]->deadline_ms < e->heap[m]->deadline_ms)
            m = r;
        if (m == i)
            return;
        heap_swap(e, i, m);
        i = m;
    }
}

int rx_deadlines_add(rx_deadlines *e, rx_transfer *t)
{
    if (e->len == e->cap) {
        long cap = e->cap ? e->cap * 2 : 64;
        rx_transfer **h = realloc(e->heap, (size_t)cap * sizeof *h);
        if (h == NULL)
            return -1;
        e->heap = h;
        e->cap = cap;
    }
    t->heap_index = e->len;
    e->heap[e->len++] = t;
    heap_up(e, t->heap_index);
    return 0;
}

void rx_deadlines_remove(rx_deadlines *e, rx_transfer *t)
{
    long i = t->heap_index;
    if (i < 0)
        return;
    t->heap_index = -1;
    e->len--;
    if (i == e->len)
        return;
    e->heap[i] = e->heap[e->len];
    e->heap[i]->heap_index = i;
    heap_up(e, i);
    heap_down(e, e->heap[i]->heap_index);
}

rx_transfer *rx_deadlines_first(const rx_deadlines *e) { return e->len > 0 ? e->heap[0] : NULL; }

void rx_deadlines_rekey_first(rx_deadlines *e, int64_t deadline_ms)
{
    e->heap[0]->deadline_ms = deadline_ms;
    heap_down(e, 0);
}

void rx_deadlines_free(rx_deadlines *e)
{
    free(e->heap);
    e->heap = NULL;
    e->len = e->cap = 0;
}
