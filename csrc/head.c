/* The HTTP/1 response head, line by line (see head.h). */
#include "head.h"

#include <string.h>

#include <curl/curl.h>

#include "token.h"
#include "transfer.h"

/* Whether a header line starts with `name` (lower case), ignoring case. The first letters are
 * compared before curl_strnequal: every response line is checked against a few names, and most
 * differ from all of them there. */
static int starts_with_name(const char *line, size_t n, const char *name, size_t len)
{
    return n >= len && ((unsigned char)line[0] | 0x20) == (unsigned char)name[0] &&
           curl_strnequal(line, name, len);
}

/* Two Content-Length headers that disagree make the response's framing ambiguous (RFC 9112
 * section 6.3): reading with either one can desynchronise a kept-alive connection. libcurl 7.88
 * silently uses the last one, so such responses are refused here. */
static int content_length_conflicts(rx_head *head, const char *line, size_t n)
{
    static const char name[] = "content-length:";
    if (!starts_with_name(line, n, name, sizeof name - 1))
        return 0;
    int64_t value = 0;
    int digits = 0;
    for (size_t i = sizeof name - 1; i < n; i++) {
        char c = line[i];
        if (c >= '0' && c <= '9') {
            if (value > (INT64_MAX - 9) / 10)
                return 1; /* absurd length: refuse rather than overflow */
            value = value * 10 + (c - '0');
            digits++;
        } else if (c == ',' && digits) {
            /* "Content-Length: 5, 5" is one header carrying a list: each must agree. */
            if (head->content_length >= 0 && head->content_length != value)
                return 1;
            head->content_length = value;
            value = 0;
            digits = 0;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
            return 0; /* not a number: curl reports that itself */
        }
    }
    if (!digits)
        return 0;
    if (head->content_length >= 0 && head->content_length != value)
        return 1;
    head->content_length = value;
    return 0;
}

/* The status code of a status line ("HTTP/1.1 200 OK", "HTTP/2 200"): the version, one
 * space, exactly three digits, then a space or the line's end (RFC 9112 section 4); -1 for
 * anything else. libcurl 8.22 reads "HTTP/1.1 2000" as 200, and "HTTP/2.0 200" on an HTTP/1.1
 * connection as HTTP/1.0. The version is HTTP/1.<digit>, or "HTTP/2" / "HTTP/3", which only
 * libcurl writes (those protocols have no status line). */
static long parse_status(const char *line, size_t n)
{
    size_t i = 5;
    while (i < n && line[i] != ' ')
        i++;
    int http1 = i == 8 && line[5] == '1' && line[6] == '.' && line[7] >= '0' && line[7] <= '9';
    int synthesized = i == 6 && (line[5] == '2' || line[5] == '3');
    if (!http1 && !synthesized)
        return -1;
    if (i + 4 > n)
        return -1;
    const char *code = line + i + 1;
    for (int k = 0; k < 3; k++)
        if (code[k] < '0' || code[k] > '9')
            return -1;
    char after = i + 4 < n ? code[3] : '\n';
    if (after != ' ' && after != '\r' && after != '\n')
        return -1;
    long status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
    return status >= 100 ? status : -1;
}

/* A field line ("Name: value"): the name a non-empty token directly followed by the colon
 * (RFC 9112 section 5.1: no whitespace before it). libcurl 8.22 passes "X-A : v" and non-ASCII
 * names on; a name the server got wrong is no name the caller can rely on. Continuation lines
 * of an obsolete line folding (starting with a space or tab) are libcurl's to join. */
static int field_line_ok(const char *line, size_t n)
{
    if (n > 0 && (line[0] == ' ' || line[0] == '\t'))
        return 1;
    size_t i = 0;
    while (i < n && rx_is_token_char((unsigned char)line[i]))
        i++;
    return i > 0 && i < n && line[i] == ':';
}

/* The RX_MARK_* bit of a field line ("Name: value"), or 0. */
static int header_mark(const char *line, size_t n)
{
    static const char encoding[] = "content-encoding:", cookie[] = "set-cookie";
    if (starts_with_name(line, n, encoding, sizeof encoding - 1))
        return RX_MARK_CONTENT_ENCODING;
    size_t name = sizeof cookie - 1;
    if (n > name && starts_with_name(line, n, cookie, name)) {
        /* "Set-Cookie:" or "Set-Cookie2:" */
        if (line[name] == ':' || (line[name] == '2' && n > name + 1 && line[name + 1] == ':'))
            return RX_MARK_SET_COOKIE;
    }
    return 0;
}

void rx_head_begin(rx_head *head)
{
    head->status = 0;
    head->content_length = -1;
    head->marks = 0;
}

static int is_blank(const char *line, size_t n)
{
    return (n == 2 && line[0] == '\r' && line[1] == '\n') || (n == 1 && line[0] == '\n');
}

int rx_head_line(rx_head *head, const char *line, size_t n)
{
    if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        rx_head_begin(head);
        head->status = parse_status(line, n);
        return head->status < 0 ? RX_E_BAD_STATUS_LINE : RX_HEAD_STATUS;
    }
    if (is_blank(line, n))
        return head->status >= 200 || head->status == 101 ? RX_HEAD_END : RX_HEAD_FIELD;
    if (!field_line_ok(line, n))
        return RX_E_BAD_HEADER_LINE;
    if (content_length_conflicts(head, line, n))
        return RX_E_BAD_FRAMING;
    head->marks |= header_mark(line, n);
    return RX_HEAD_FIELD;
}

int rx_head_take(rx_head *head, rx_buffer *headers, size_t limit, const char *line, size_t n)
{
    int kind = rx_head_line(head, line, n);
    if (kind == RX_HEAD_STATUS) {
        rx_buffer_clear(headers); /* keep only the final block */
    } else if (kind == RX_HEAD_END) {
        return rx_buffer_append(headers, line, n) != 0 ? RX_E_NOMEM : kind;
    } else if (kind != RX_HEAD_FIELD) {
        return kind; /* refused: an RX_E_* */
    }
    if (headers->len + n > limit)
        return RX_E_HEADERS_TOO_LARGE;
    return rx_buffer_append(headers, line, n) != 0 ? RX_E_NOMEM : kind;
}
