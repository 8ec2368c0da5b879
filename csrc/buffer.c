#include "buffer.h"
#include "heap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long live_buffers; /* atomic */

int rx_buffer_reserve(rx_buffer *b, size_t cap)
{
    if (cap <= b->cap)
        return 0;
    char *p = rx_realloc(b->data, cap);
    if (p == NULL)
        return -1;
    if (b->data == NULL)
        __atomic_add_fetch(&live_buffers, 1, __ATOMIC_RELAXED);
    b->data = p;
    b->cap = cap;
    return 0;
}

int rx_buffer_reserve_more(rx_buffer *b, size_t n)
{
    if (n > SIZE_MAX - b->len)
        return -1;
    size_t need = b->len + n;
    if (need > b->cap) {
        /* Doubling keeps appends amortised O(1); 1 KiB floor avoids tiny reallocs. */
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        if (rx_buffer_reserve(b, cap) != 0)
            return -1;
    }
    return 0;
}

int rx_buffer_append(rx_buffer *b, const void *src, size_t n)
{
    if (rx_buffer_reserve_more(b, n) != 0)
        return -1;
    if (n > 0)
        memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

char *rx_buffer_steal(rx_buffer *b, size_t *len)
{
    char *p = b->data;
    *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void rx_buffer_free(rx_buffer *b)
{
    rx_buffer_free_stolen(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void rx_buffer_free_stolen(char *data)
{
    if (data == NULL)
        return;
    rx_free(data);
    __atomic_sub_fetch(&live_buffers, 1, __ATOMIC_RELAXED);
}

long rx_buffer_live_count(void) { return __atomic_load_n(&live_buffers, __ATOMIC_RELAXED); }

void *rx_table_grow(void *table, size_t *len, size_t size, size_t index)
{
    if (index < *len)
        return table;
    size_t grown_len = *len ? *len : 64;
    while (grown_len <= index)
        grown_len *= 2;
    char *grown = rx_realloc(table, grown_len * size);
    if (grown == NULL)
        return NULL;
    memset(grown + *len * size, 0, (grown_len - *len) * size);
    *len = grown_len;
    return grown;
}
