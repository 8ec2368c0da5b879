/* A growable byte buffer: the one container the engine uses for bodies and header blocks.
 *
 * Ownership is plain: whoever holds the struct owns `data` and frees it with rx_buffer_free(),
 * or hands it on with rx_buffer_steal(). Not thread-safe; each buffer has one writer at a time. */
#ifndef RX_BUFFER_H
#define RX_BUFFER_H

#include <stddef.h>

typedef struct rx_buffer {
    char *data;
    size_t len;
    size_t cap;
} rx_buffer;

/* Make room for at least `cap` bytes in total. Returns 0, or -1 when out of memory. */
int rx_buffer_reserve(rx_buffer *b, size_t cap);

/* Make room for n more bytes after the contents, growing geometrically as rx_buffer_append
 * does: for a caller that writes several pieces at b->data + b->len itself. Returns 0, or -1
 * when out of memory. */
int rx_buffer_reserve_more(rx_buffer *b, size_t n);

/* Append n bytes, growing geometrically. Returns 0, or -1 when out of memory. */
int rx_buffer_append(rx_buffer *b, const void *src, size_t n);

/* Forget the contents, keep the allocation. */
static inline void rx_buffer_clear(rx_buffer *b) { b->len = 0; }

/* Hand the allocation to the caller, who frees it with rx_buffer_free_stolen(); the buffer is
 * empty afterwards. */
char *rx_buffer_steal(rx_buffer *b, size_t *len);

void rx_buffer_free(rx_buffer *b);

/* Free what rx_buffer_steal() handed out (NULL is fine). */
void rx_buffer_free_stolen(char *data);

/* Tables indexed by a socket descriptor (sockets.c, origin.c): `table`, an array of `*len`
 * entries of `size` bytes, made long enough to hold entry `index`, grown by doubling (from 64)
 * with the new entries zeroed. Returns the table (maybe moved, *len updated), or NULL when out
 * of memory (the table is then unchanged). */
void *rx_table_grow(void *table, size_t *len, size_t size, size_t index);

/* Buffer allocations alive in this process, stolen ones included (tests assert it returns to
 * zero once every client and response is gone). */
long rx_buffer_live_count(void);

#endif
