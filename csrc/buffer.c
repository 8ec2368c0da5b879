#include "buffer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int rx_buffer_reserve(rx_buffer *b, size_t cap)
{
    if (cap <= b->cap)
        return 0;
    char *p = realloc(b->data, cap);
    if (p == NULL)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int rx_buffer_append(rx_buffer *b, const void *src, size_t n)
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
    memcpy(b->data + b->len, src, n);
    b->len = need;
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
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
