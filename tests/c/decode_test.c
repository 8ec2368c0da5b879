/* Drives the content decoders (csrc/decode.c) directly, without Python, so that valgrind,
 * ASan and the emulators of the cross-builds see only them and the codecs.
 *
 *   decode_test < VECTORS      the records tests/support/decode_vectors.py writes
 *
 * Each record is decoded several ways: fed whole or in small pieces, read into buffers of a few
 * sizes, each with a guard byte after its end that no read may touch. A coding this build
 * leaves out (the MinGW cross-build has no brotli or zstd) is counted as skipped. Exits 0 when
 * every check passed; prints the failed check otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

#include "decode.h"

#include "check.h"

#define GUARD 0xA5

typedef struct record {
    char kind;
    rx_coding coding;
    const unsigned char *input;
    size_t input_len;
    const unsigned char *expected; /* kind D */
    uint64_t expected_len;
} record;

/* What one way of decoding a record gave: the last status and the bytes out. */
typedef struct outcome {
    int status;
    unsigned char *out;
    size_t out_len;
    size_t largest_read;
} outcome;

static unsigned char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 20, n = 0, got;
    unsigned char *data = malloc(cap);
    while (data != NULL && (got = fread(data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *grown = realloc(data, cap * 2);
            if (grown == NULL) {
                free(data);
                return NULL;
            }
            data = grown;
            cap *= 2;
        }
    }
    *len = n;
    return data;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The record at *p (advanced past it); 0 at the end, -1 if malformed. */
static int next_record(const unsigned char **p, const unsigned char *end, record *r)
{
    if (*p == end)
        return 0;
    if (end - *p < 6)
        return -1;
    r->kind = (char)(*p)[0];
    r->coding = (rx_coding)(*p)[1];
    r->input_len = (size_t)le(*p + 2, 4);
    *p += 6;
    if ((size_t)(end - *p) < r->input_len + 8)
        return -1;
    r->input = *p;
    *p += r->input_len;
    r->expected_len = le(*p, 8);
    *p += 8;
    r->expected = NULL;
    if (r->kind == 'D') {
        if ((uint64_t)(end - *p) < r->expected_len)
            return -1;
        r->expected = *p;
        *p += r->expected_len;
    }
    return 1;
}

/* Decode `r` fed in pieces of `piece` bytes (0: whole), read `cap` bytes at a time. Output is
 * kept (up to keep_max bytes; more is only counted). */
static outcome decode(const record *r, size_t piece, size_t cap, size_t keep_max)
{
    outcome o = {RX_DECODE_NEED_INPUT, NULL, 0, 0};
    rx_decoder *d = rx_decoder_new(r->coding);
    unsigned char *buf = malloc(cap + 1);
    size_t kept_cap = keep_max < r->expected_len ? keep_max : (size_t)r->expected_len;
    o.out = malloc(kept_cap + 1);
    if (d == NULL || buf == NULL || o.out == NULL) {
        CHECK(0, "out of memory");
        o.status = RX_DECODE_NO_MEMORY;
        goto done;
    }
    size_t at = 0;
    do {
        size_t n = piece == 0 ? r->input_len - at : piece;
        if (n > r->input_len - at)
            n = r->input_len - at;
        CHECK(rx_decoder_feed(d, r->input + at, n) == 0, "feed refused");
        CHECK(rx_decoder_input_left(d) == n, "input_left after feed");
        at += n;
        for (;;) {
            size_t written = 12345;
            buf[cap] = GUARD;
            o.status = rx_decoder_read(d, buf, cap, &written);
            CHECK(buf[cap] == GUARD, "a read wrote past its room (cap %zu)", cap);
            CHECK(written <= cap, "written %zu > cap %zu", written, cap);
            if (written > o.largest_read)
                o.largest_read = written;
            if (o.out_len < kept_cap) {
                size_t copy = written < kept_cap - o.out_len ? written : kept_cap - o.out_len;
                memcpy(o.out + o.out_len, buf, copy);
            }
            o.out_len += written;
            if (o.status < 0)
                goto done;
            if (o.status == RX_DECODE_NEED_INPUT) {
                CHECK(rx_decoder_input_left(d) == 0, "need input with input left");
                break;
            }
            CHECK(written == cap, "MORE without a full buffer");
            if (rx_decoder_input_left(d) > 0) /* feeding now is refused */
                CHECK(rx_decoder_feed(d, "x", 1) == RX_DECODE_INVALID, "feed over unread input");
        }
    } while (at < r->input_len);
    o.status = rx_decoder_finish(d);
done:
    if (o.status == RX_DECODE_INVALID)
        CHECK(rx_decoder_message(d)[0] != '\0', "an error without a message");
    rx_decoder_free(d);
    free(buf);
    return o;
}

static const char *coding_name(rx_coding coding)
{
    static const char *names[] = {"?", "gzip", "deflate", "br", "zstd"};
    return coding >= 1 && coding <= 4 ? names[coding] : "?";
}

static void check_record(const record *r, int index)
{
    static const size_t pieces[] = {0, 1, 7, 4096};
    static const size_t caps[] = {1, 13, 65536, 1 << 20};
    for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++) {
        for (size_t ci = 0; ci < sizeof caps / sizeof *caps; ci++) {
            size_t piece = pieces[pi], cap = caps[ci];
            /* Byte by byte only where that stays quick (valgrind runs this too). */
            if ((piece == 1 || cap == 1) && (r->input_len > 30000 || r->expected_len > 100000))
                continue;
            if (r->kind == 'B' && (cap < 65536 || (piece > 0 && piece < 4096)))
                continue;
            outcome o = decode(r, piece, cap, r->kind == 'D' ? (size_t)r->expected_len : 0);
            const char *name = coding_name(r->coding);
            switch (r->kind) {
            case 'D':
                CHECK(o.status == RX_DECODE_NEED_INPUT, "record %d (%s): status %d, want done "
                      "(piece %zu, cap %zu)", index, name, o.status, piece, cap);
                CHECK(o.out_len == r->expected_len &&
                          (o.out_len == 0 || memcmp(o.out, r->expected, o.out_len) == 0),
                      "record %d (%s): wrong output (%zu bytes, want %llu)", index, name,
                      o.out_len, (unsigned long long)r->expected_len);
                break;
            case 'T':
                CHECK(o.status == RX_DECODE_TRUNCATED, "record %d (%s): status %d, want "
                      "truncated (piece %zu, cap %zu)", index, name, o.status, piece, cap);
                break;
            case 'I':
                CHECK(o.status == RX_DECODE_INVALID, "record %d (%s): status %d, want invalid "
                      "(piece %zu, cap %zu)", index, name, o.status, piece, cap);
                break;
            case 'B':
                CHECK(o.status == RX_DECODE_NEED_INPUT && o.out_len == r->expected_len,
                      "record %d (%s): bomb gave %zu bytes, status %d", index, name, o.out_len,
                      o.status);
                CHECK(o.largest_read <= cap, "record %d: a read of %zu bytes", index,
                      o.largest_read);
                break;
            default:
                CHECK(0, "record %d: unknown kind %c", index, r->kind);
            }
            free(o.out);
        }
    }
}

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdin), _O_BINARY);
#endif
    size_t len;
    unsigned char *data = read_all(stdin, &len);
    if (data == NULL) {
        fprintf(stderr, "cannot read the vectors\n");
        return 2;
    }
    const unsigned char *p = data, *end = data + len;
    record r;
    int index = 0, skipped = 0, result;
    while ((result = next_record(&p, end, &r)) > 0) {
        if (rx_decoder_supports(r.coding))
            check_record(&r, index);
        else
            skipped++;
        index++;
    }
    CHECK(result == 0, "malformed vectors after record %d", index);
    CHECK(index > 0, "no vectors");
    CHECK(rx_decoder_new((rx_coding)99) == NULL, "a decoder for an unknown coding");
    CHECK(rx_decoder_live_count() == 0, "%ld decoders alive", rx_decoder_live_count());
    free(data);
    printf("records: %d, skipped (coding not built in): %d\n", index, skipped);
    printf("codings: gzip deflate%s%s\n", rx_decoder_supports(RX_CODING_BR) ? " br" : "",
           rx_decoder_supports(RX_CODING_ZSTD) ? " zstd" : "");
    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
