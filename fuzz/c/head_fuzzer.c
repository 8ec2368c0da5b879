/* libFuzzer target: the HTTP/1 response head as on_header (csrc/transfer.c) takes it, line by
 * line, through rx_head_take (csrc/head.c): the status line, field lines, Content-Length
 * conflicts, header marks, the header block kept and its size limit.
 *
 * Input: one byte that chooses the size limit, then the lines of one or more header blocks
 * (each line ends at LF and keeps it, as libcurl's header callback hands it over; a last piece
 * without one is fed too). Each line is copied into an allocation of exactly its length, so
 * AddressSanitizer sees a read past its end.
 *
 * Besides the sanitizers, every verdict is checked against a plain model written here from
 * RFC 9112 and head.h, independently of head.c: a line head.c accepts that the model refuses,
 * or the other way round, a wrong status, marks or header block, aborts (a crash to libFuzzer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "head.h"
#include "transfer.h"

/* ---------------------------------------------------------------------------------------------
 * The model.
 */

static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Whether line[0..len) is `name` (lower case), ignoring ASCII case. */
static int name_is(const char *line, size_t len, const char *name)
{
    if (strlen(name) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (lower((unsigned char)line[i]) != name[i])
            return 0;
    return 1;
}

/* "HTTP/1.<d> NNN", "HTTP/2 NNN" or "HTTP/3 NNN", NNN from 100 to 999, then a space, CR, LF
 * or the end: the status, else -1. */
static long model_status(const char *s, size_t n)
{
    size_t i;
    if (n >= 8 && memcmp(s, "HTTP/1.", 7) == 0 && s[7] >= '0' && s[7] <= '9')
        i = 8;
    else if (n >= 6 && (memcmp(s, "HTTP/2", 6) == 0 || memcmp(s, "HTTP/3", 6) == 0))
        i = 6;
    else
        return -1;
    if (n < i + 4 || s[i] != ' ')
        return -1;
    long status = 0;
    for (size_t k = i + 1; k < i + 4; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        status = status * 10 + (s[k] - '0');
    }
    if (n > i + 4 && s[i + 4] != ' ' && s[i + 4] != '\r' && s[i + 4] != '\n')
        return -1;
    return status >= 100 ? status : -1;
}

/* The length of the field name of "Name: value" (a token directly followed by a colon), or 0. */
static size_t model_name(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)s[i]))
        i++;
    return i > 0 && i < n && s[i] == ':' ? i : 0;
}

/* A Content-Length value of the plain form: OWS 1*DIGIT *(OWS "," OWS 1*DIGIT) OWS, then the
 * line ending; each number of 1 to 18 digits (so no overflow question arises). Stores the
 * numbers (at most `max`) and returns how many, or -1 for any other form. */
static int model_lengths(const char *s, size_t n, int64_t *out, int max)
{
    size_t i = 0;
    int count = 0;
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--; /* the line ending (a CR elsewhere is "any other form") */
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t start = i;
        int64_t value = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (i - start < 18)
                value = value * 10 + (s[i] - '0');
            i++;
        }
        if (i == start || i - start > 18 || count == max)
            return -1;
        out[count++] = value;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n)
            return count;
        if (s[i] != ',')
            return -1;
        i++;
    }
}

typedef struct model {
    long status;        /* of the block being received, 0 before a status line */
    int64_t length;     /* its Content-Length, -1 when none was seen */
    int length_unknown; /* a Content-Length of another form was seen: no prediction */
    int marks;
    size_t block_start; /* the offset of its first line in the input */
    size_t block_len;   /* the bytes head.c keeps of it */
} model;

/* The verdict the model expects for a line (RX_HEAD_* or RX_E_*), or 0 when it makes no
 * prediction (a Content-Length of another form). Updates the model as head.c would. */
static int model_line(model *m, const char *s, size_t n, size_t offset)
{
    if (n >= 5 && memcmp(s, "HTTP/", 5) == 0) {
        long status = model_status(s, n);
        m->status = status < 0 ? 0 : status;
        m->length = -1;
        m->length_unknown = 0;
        m->marks = 0;
        m->block_start = offset;
        m->block_len = 0;
        return status < 0 ? RX_E_BAD_STATUS_LINE : RX_HEAD_STATUS;
    }
    if ((n == 2 && s[0] == '\r' && s[1] == '\n') || (n == 1 && s[0] == '\n'))
        return m->status >= 200 || m->status == 101 ? RX_HEAD_END : RX_HEAD_FIELD;
    if (n > 0 && (s[0] == ' ' || s[0] == '\t'))
        return RX_HEAD_FIELD; /* obsolete line folding: libcurl's to join */
    size_t name = model_name(s, n);
    if (name == 0)
        return RX_E_BAD_HEADER_LINE;
    if (name_is(s, name, "content-length")) {
        int64_t values[16];
        int count = model_lengths(s + name + 1, n - name - 1, values, 16);
        if (count < 0 || m->length_unknown) {
            m->length_unknown = 1;
            return 0;
        }
        for (int k = 0; k < count; k++) {
            if (m->length >= 0 && m->length != values[k])
                return RX_E_BAD_FRAMING;
            m->length = values[k];
        }
    } else if (name_is(s, name, "content-encoding")) {
        m->marks |= RX_MARK_CONTENT_ENCODING;
    } else if (name_is(s, name, "set-cookie") || name_is(s, name, "set-cookie2")) {
        m->marks |= RX_MARK_SET_COOKIE;
    }
    return RX_HEAD_FIELD;
}

/* ---------------------------------------------------------------------------------------------
 * The target.
 */

static void fail(const char *what, const char *line, size_t n, int got, int want)
{
    fprintf(stderr, "head_fuzzer: %s: got %d, the model says %d, for the line \"", what, got,
            want);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    fprintf(stderr, "\"\n");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* The limit: Client(max_header_bytes=...) small enough to be reached, or the default. */
    size_t limit = data[0] & 0x80 ? (size_t)RX_DEFAULT_MAX_HEADER_BYTES
                                  : 16 + (size_t)(data[0] & 0x7f) * 8;
    const char *input = (const char *)data + 1;
    size_t len = size - 1;

    rx_head head;
    rx_buffer headers = {0};
    model m = {0};
    m.length = -1;
    rx_head_begin(&head);
    size_t at = 0;
    while (at < len) {
        const char *end = memchr(input + at, '\n', len - at);
        size_t n = end != NULL ? (size_t)(end - (input + at)) + 1 : len - at;
        char *line = malloc(n);
        if (line == NULL)
            abort();
        memcpy(line, input + at, n);

        int want = model_line(&m, line, n, at);
        int got = rx_head_take(&head, &headers, limit, line, n);
        if (want == 0) /* no prediction: refused as a conflict, or a field line */
            want = got == RX_E_BAD_FRAMING ? got : RX_HEAD_FIELD;
        if (want == RX_HEAD_STATUS || want == RX_HEAD_FIELD) {
            if (m.block_len + n > limit)
                want = RX_E_HEADERS_TOO_LARGE;
            else
                m.block_len += n;
        }
        if (got != want)
            fail("verdict", line, n, got, want);
        if (got == RX_HEAD_STATUS && head.status != m.status)
            fail("status", line, n, (int)head.status, (int)m.status);
        if (got == RX_HEAD_END) {
            if (head.marks != m.marks)
                fail("marks", line, n, head.marks, m.marks);
            size_t block = at + n - m.block_start;
            if (headers.len != block || memcmp(headers.data, input + m.block_start, block) != 0)
                fail("header block", line, n, (int)headers.len, (int)block);
        }
        free(line);
        at += n;
        if (got != RX_HEAD_STATUS && got != RX_HEAD_FIELD)
            break; /* refused (on_header aborts the transfer), or complete */
    }
    rx_buffer_free(&headers);
    return 0;
}
