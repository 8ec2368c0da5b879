/* The HTTP/1 response head, checked line by line as libcurl's header callback hands it over
 * (on_header in transfer.c): status lines and field lines are held to RFC 9112 where libcurl
 * 8.22 is lenient, conflicting Content-Length headers are refused, and the fields the Python
 * side acts on are noted (RX_MARK_*). No transfer and no libcurl handle: a line in, a verdict
 * out (rx_head_line, which allocates nothing), and the line kept in the header block the
 * response will carry (rx_head_take). fuzz/c/head_fuzzer.c calls both as on_header does.
 *
 * libcurl hands over every line of every block, 1xx blocks included, with its line ending, and
 * writes a status line of its own ("HTTP/2 200") for protocols that have none. */
#ifndef RX_HEAD_H
#define RX_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "buffer.h"

/* The block being received. */
typedef struct rx_head {
    long status;            /* its status code (0 before its status line) */
    int64_t content_length; /* its Content-Length, -1 when it has none */
    int marks;              /* RX_MARK_* bits of its fields */
} rx_head;

/* What a line is (rx_head_line), when it is acceptable. */
enum {
    RX_HEAD_STATUS = 1, /* a status line: a new block, the one before (a 1xx) is dropped */
    RX_HEAD_FIELD = 2,  /* a field line, or the blank line that ends a 1xx block */
    RX_HEAD_END = 3,    /* the blank line after the final block: the head is complete */
};

/* Before the first line of an attempt: no block yet. */
void rx_head_begin(rx_head *head);

/* One line, with its line ending: its RX_HEAD_* kind, or the RX_E_* error that refuses the
 * response (RX_E_BAD_STATUS_LINE, RX_E_BAD_HEADER_LINE, RX_E_BAD_FRAMING). */
int rx_head_line(rx_head *head, const char *line, size_t n);

/* rx_head_line, then the line into `headers`, which holds the lines of the block being
 * received (a status line starts it afresh): at most `limit` bytes before the blank line that
 * ends the final block, which is appended whatever the size. Returns the line's RX_HEAD_* kind,
 * or the RX_E_* error that refuses the response: rx_head_line's, RX_E_HEADERS_TOO_LARGE or
 * RX_E_NOMEM. After RX_HEAD_END, `headers` is the response's header block and head->marks its
 * marks. */
int rx_head_take(rx_head *head, rx_buffer *headers, size_t limit, const char *line, size_t n);

#endif
