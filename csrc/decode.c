/* Content decoders (decode.h): gzip and deflate with zlib, br with brotli, zstd with zstd.
 *
 * Each decoder reads from two places in turn: `carry`, at most two bytes it held back from an
 * earlier piece (the first bytes of a deflate body, before they say zlib or raw; half of a gzip
 * member's magic number), then the piece the caller fed, borrowed. A read loops until the
 * caller's buffer is full or both are used up, moving on from one gzip member or zstd frame to
 * the next within the same read. */
#include "decode.h"
#include "heap.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#ifdef RX_DECODE_BROTLI
#include <brotli/decode.h>
#endif
#ifdef RX_DECODE_ZSTD
/* For ZSTD_getFrameHeader and ZSTD_FRAMEHEADERSIZE_MAX (in libzstd since 1.3, exported from
 * its shared library too): a frame's declared content size while the frame is read. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#endif

/* Where a decoder is in its body. */
enum phase {
    PHASE_HEAD,    /* deflate: fewer than two bytes seen, zlib or raw not decided yet */
    PHASE_STREAM,  /* inside a stream (a gzip member, a zstd frame) */
    PHASE_BETWEEN, /* gzip: after a member; zstd: after a frame. Complete so far */
    PHASE_ENDED,   /* deflate, br: after the end of the stream; gzip: after bytes that are
                      not a member (the rest of the body is ignored). Complete */
    PHASE_FAILED,  /* an error was reported; it is reported again */
};

struct rx_decoder {
    rx_coding coding;
    enum phase phase;
    int failure;  /* the RX_DECODE_* error once PHASE_FAILED */
    int seen;     /* a non-empty piece was fed */
    int z_inited; /* zlib's stream is initialised (gzip, deflate) */
    int out_full; /* the codec's last call filled the buffer: output may be waiting in it */
    const unsigned char *in; /* the fed piece, borrowed: what is left of it */
    size_t in_len;
    unsigned char carry[2]; /* bytes held back from an earlier piece, read before `in` */
    size_t carry_len;
    union {
        z_stream z;
#ifdef RX_DECODE_BROTLI
        BrotliDecoderState *br;
#endif
#ifdef RX_DECODE_ZSTD
        ZSTD_DCtx *zstd;
#endif
    } codec;
#ifdef RX_DECODE_ZSTD
    /* The zstd frame being read, to hold its output to the content size its header declares:
     * libzstd checks that only when it writes a whole frame in one call, so a frame read in
     * small steps that declares 90 bytes and gives none would otherwise decode to nothing. */
    struct {
        unsigned char head[ZSTD_FRAMEHEADERSIZE_MAX]; /* its first bytes, as zstd takes them */
        size_t head_len;
        int head_read;                /* the header is parsed: `declared` is known */
        unsigned long long declared;  /* ZSTD_CONTENTSIZE_UNKNOWN when it does not say */
        unsigned long long given;     /* bytes of output so far */
    } frame;
#endif
    char message[160];
};

static long live_decoders; /* atomic */

/* zlib counts in uInt: at most this much input or output per call. */
#define ZLIB_STEP ((size_t)1 << 30)

int rx_decoder_supports(rx_coding coding)
{
    switch (coding) {
    case RX_CODING_GZIP:
    case RX_CODING_DEFLATE:
        return 1;
    case RX_CODING_BR:
#ifdef RX_DECODE_BROTLI
        return 1;
#else
        return 0;
#endif
    case RX_CODING_ZSTD:
#ifdef RX_DECODE_ZSTD
        return 1;
#else
        return 0;
#endif
    }
    return 0;
}

rx_decoder *rx_decoder_new(rx_coding coding)
{
    if (!rx_decoder_supports(coding))
        return NULL;
    rx_decoder *d = rx_calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->coding = coding;
    d->phase = coding == RX_CODING_DEFLATE ? PHASE_HEAD : PHASE_STREAM;
    int ok = 0;
    switch (coding) {
    case RX_CODING_GZIP:
        /* 16 + 15: the gzip wrapper only, with the largest window. */
        ok = inflateInit2(&d->codec.z, 16 + MAX_WBITS) == Z_OK;
        d->z_inited = ok;
        break;
    case RX_CODING_DEFLATE:
        /* Started as zlib; rx_decoder_read switches to raw once the first bytes say so. */
        ok = inflateInit2(&d->codec.z, MAX_WBITS) == Z_OK;
        d->z_inited = ok;
        break;
    case RX_CODING_BR:
#ifdef RX_DECODE_BROTLI
        d->codec.br = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        ok = d->codec.br != NULL;
#endif
        break;
    case RX_CODING_ZSTD:
#ifdef RX_DECODE_ZSTD
        d->codec.zstd = ZSTD_createDCtx();
        ok = d->codec.zstd != NULL;
#endif
        break;
    }
    if (!ok) {
        rx_free(d);
        return NULL;
    }
    __atomic_add_fetch(&live_decoders, 1, __ATOMIC_RELAXED);
    return d;
}

void rx_decoder_free(rx_decoder *d)
{
    if (d == NULL)
        return;
    switch (d->coding) {
    case RX_CODING_GZIP:
    case RX_CODING_DEFLATE:
        if (d->z_inited)
            inflateEnd(&d->codec.z);
        break;
    case RX_CODING_BR:
#ifdef RX_DECODE_BROTLI
        BrotliDecoderDestroyInstance(d->codec.br);
#endif
        break;
    case RX_CODING_ZSTD:
#ifdef RX_DECODE_ZSTD
        ZSTD_freeDCtx(d->codec.zstd);
#endif
        break;
    }
    rx_free(d);
    __atomic_sub_fetch(&live_decoders, 1, __ATOMIC_RELAXED);
}

long rx_decoder_live_count(void) { return __atomic_load_n(&live_decoders, __ATOMIC_RELAXED); }

const char *rx_decoder_message(const rx_decoder *d) { return d->message; }

size_t rx_decoder_input_left(const rx_decoder *d) { return d->in_len; }

int rx_decoder_feed(rx_decoder *d, const void *data, size_t len)
{
    if (d->in_len > 0)
        return RX_DECODE_INVALID;
    d->in = data;
    d->in_len = len;
    if (len > 0)
        d->seen = 1;
    return 0;
}

/* --- input ---------------------------------------------------------------------------------- */

/* The bytes to read next: the carry while it holds any, else the fed piece. */
static const unsigned char *source(rx_decoder *d, size_t *len)
{
    if (d->carry_len > 0) {
        *len = d->carry_len;
        return d->carry;
    }
    *len = d->in_len;
    return d->in;
}

/* `n` bytes of what source() returned were used. */
static void consume(rx_decoder *d, size_t n)
{
    if (d->carry_len > 0) {
        memmove(d->carry, d->carry + n, d->carry_len - n);
        d->carry_len -= n;
    } else {
        d->in += n;
        d->in_len -= n;
    }
}

/* Byte `i` of the input still to read, carry first; -1 when there are not that many. */
static int peek(const rx_decoder *d, size_t i)
{
    if (i < d->carry_len)
        return d->carry[i];
    i -= d->carry_len;
    return i < d->in_len ? d->in[i] : -1;
}

static void drop_input(rx_decoder *d)
{
    d->carry_len = 0;
    d->in += d->in_len;
    d->in_len = 0;
}

/* Move what is left of the fed piece (at most the carry's room) into the carry. */
static void hold_back(rx_decoder *d)
{
    while (d->in_len > 0 && d->carry_len < sizeof d->carry) {
        d->carry[d->carry_len++] = *d->in++;
        d->in_len--;
    }
}

/* Report an error, now and on every later call: `what` in the codec's words, then which codec
 * and its error code (none when 0: a condition of this file's, not the codec's). */
static int fail(rx_decoder *d, int status, const char *what, const char *codec, int code)
{
    if (code != 0)
        snprintf(d->message, sizeof d->message, "%s (%s error %d)", what, codec, code);
    else
        snprintf(d->message, sizeof d->message, "%s (%s)", what, codec);
    d->phase = PHASE_FAILED;
    d->failure = status;
    return status;
}

/* --- gzip and deflate ----------------------------------------------------------------------- */

/* One inflate() call from the current source into out[*pos..cap): Z_OK (progress, or nothing
 * left to do), Z_STREAM_END, or a negative RX_DECODE_* error. */
static int inflate_step(rx_decoder *d, unsigned char *out, size_t cap, size_t *pos)
{
    z_stream *z = &d->codec.z;
    size_t in_len;
    const unsigned char *in = source(d, &in_len);
    size_t in_step = in_len < ZLIB_STEP ? in_len : ZLIB_STEP;
    size_t out_step = cap - *pos < ZLIB_STEP ? cap - *pos : ZLIB_STEP;
    z->next_in = (unsigned char *)in; /* zlib's next_in is not const without ZLIB_CONST */
    z->avail_in = (uInt)in_step;
    z->next_out = out + *pos;
    z->avail_out = (uInt)out_step;
    int ret = inflate(z, Z_NO_FLUSH);
    size_t used = in_step - z->avail_in, made = out_step - z->avail_out;
    consume(d, used);
    *pos += made;
    d->out_full = z->avail_out == 0;
    switch (ret) {
    case Z_STREAM_END:
        return Z_STREAM_END;
    case Z_OK:
        return Z_OK;
    case Z_BUF_ERROR: /* no progress possible: only with nothing to read or no room */
        if (used == 0 && made == 0 && in_step > 0 && out_step > 0)
            return fail(d, RX_DECODE_INVALID, "no progress", "zlib", ret);
        return Z_OK;
    case Z_NEED_DICT:
        return fail(d, RX_DECODE_INVALID, "the stream needs a preset dictionary", "zlib", ret);
    case Z_MEM_ERROR:
        return fail(d, RX_DECODE_NO_MEMORY, "out of memory", "zlib", ret);
    default:
        return fail(d, RX_DECODE_INVALID, z->msg != NULL ? z->msg : "invalid data", "zlib", ret);
    }
}

/* gzip, between two members: skip zero padding, then start the next member if one follows;
 * anything else ends the body. */
static void gzip_between(rx_decoder *d)
{
    int b;
    while ((b = peek(d, 0)) == 0)
        consume(d, 1);
    if (b < 0)
        return; /* all padding so far */
    if (b != 0x1f) {
        d->phase = PHASE_ENDED;
        drop_input(d);
        return;
    }
    int b1 = peek(d, 1);
    if (b1 < 0) {
        hold_back(d); /* half a magic number: the next piece says */
        return;
    }
    if (b1 != 0x8b) {
        d->phase = PHASE_ENDED;
        drop_input(d);
        return;
    }
    inflateReset(&d->codec.z);
    d->phase = PHASE_STREAM;
}

/* deflate, first bytes: once two are there, try them as a zlib header; zlib refuses them
 * at once if they are not one, and they are then read again as raw deflate. */
static int deflate_head(rx_decoder *d)
{
    hold_back(d);
    if (d->carry_len < 2)
        return 0;
    z_stream *z = &d->codec.z;
    unsigned char unused;
    z->next_in = d->carry;
    z->avail_in = 2;
    z->next_out = &unused;
    z->avail_out = 0; /* a header writes nothing */
    int ret = inflate(z, Z_NO_FLUSH);
    if (ret == Z_DATA_ERROR) {
        if (inflateReset2(z, -MAX_WBITS) != Z_OK)
            return fail(d, RX_DECODE_INVALID, "cannot switch to raw deflate", "zlib", ret);
    } else if (ret == Z_OK || ret == Z_BUF_ERROR) {
        d->carry_len = 0; /* the zlib header, taken */
    } else {
        return fail(d, RX_DECODE_INVALID, z->msg != NULL ? z->msg : "invalid data", "zlib", ret);
    }
    d->phase = PHASE_STREAM;
    return 0;
}

static int read_zlib(rx_decoder *d, unsigned char *out, size_t cap, size_t *pos)
{
    while (*pos < cap) {
        if (d->carry_len == 0 && d->in_len == 0 && !(d->phase == PHASE_STREAM && d->out_full))
            return RX_DECODE_NEED_INPUT;
        switch (d->phase) {
        case PHASE_HEAD:
            if (deflate_head(d) < 0)
                return d->failure;
            if (d->phase == PHASE_HEAD)
                return RX_DECODE_NEED_INPUT; /* all held back */
            break;
        case PHASE_STREAM: {
            int ret = inflate_step(d, out, cap, pos);
            if (ret < 0)
                return ret;
            if (ret == Z_STREAM_END)
                d->phase = d->coding == RX_CODING_GZIP ? PHASE_BETWEEN : PHASE_ENDED;
            break;
        }
        case PHASE_BETWEEN:
            gzip_between(d);
            if (d->phase == PHASE_BETWEEN)
                return RX_DECODE_NEED_INPUT; /* padding, or half a magic number held back */
            break;
        case PHASE_ENDED:
            drop_input(d); /* bytes after the end are ignored */
            return RX_DECODE_NEED_INPUT;
        case PHASE_FAILED:
            return d->failure;
        }
    }
    return RX_DECODE_MORE;
}

/* --- br ------------------------------------------------------------------------------------- */

#ifdef RX_DECODE_BROTLI
static int read_brotli(rx_decoder *d, unsigned char *out, size_t cap, size_t *pos)
{
    while (*pos < cap) {
        if (d->in_len == 0 && !d->out_full)
            return RX_DECODE_NEED_INPUT;
        if (d->phase == PHASE_ENDED) {
            if (d->in_len > 0)
                return fail(d, RX_DECODE_INVALID, "data after the end of the stream", "brotli",
                            0);
            d->out_full = 0;
            return RX_DECODE_NEED_INPUT;
        }
        size_t avail_in = d->in_len, avail_out = cap - *pos;
        const uint8_t *next_in = d->in;
        uint8_t *next_out = out + *pos;
        BrotliDecoderResult result =
            BrotliDecoderDecompressStream(d->codec.br, &avail_in, &next_in, &avail_out, &next_out,
                                          NULL);
        size_t used = d->in_len - avail_in, made = (cap - *pos) - avail_out;
        consume(d, used);
        *pos += made;
        d->out_full = avail_out == 0;
        switch (result) {
        case BROTLI_DECODER_RESULT_SUCCESS:
            d->phase = PHASE_ENDED; /* input left over is reported on the next turn */
            break;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
            if (used == 0 && made == 0 && *pos < cap && d->in_len > 0)
                return fail(d, RX_DECODE_INVALID, "no progress", "brotli", 0);
            break;
        default: {
            BrotliDecoderErrorCode code = BrotliDecoderGetErrorCode(d->codec.br);
            /* Its names are the enum's ("_ERROR_FORMAT_PADDING_1" or "PADDING_1"). */
            const char *name = BrotliDecoderErrorString(code);
            char what[96];
            snprintf(what, sizeof what, "invalid data: %s", name + (name[0] == '_'));
            /* -21 to -30: brotli could not allocate. */
            int status = code <= BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES &&
                                 code >= BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES
                             ? RX_DECODE_NO_MEMORY
                             : RX_DECODE_INVALID;
            return fail(d, status, what, "brotli", (int)code);
        }
        }
    }
    return RX_DECODE_MORE;
}
#endif

/* --- zstd ----------------------------------------------------------------------------------- */

#ifdef RX_DECODE_ZSTD
/* Notes the `taken` bytes at `start` that zstd consumed, until the frame's header is whole. */
static void note_zstd_header(rx_decoder *d, const unsigned char *start, size_t taken)
{
    size_t room = sizeof d->frame.head - d->frame.head_len;
    size_t n = taken < room ? taken : room;
    memcpy(d->frame.head + d->frame.head_len, start, n);
    d->frame.head_len += n;
    ZSTD_frameHeader header;
    size_t more = ZSTD_getFrameHeader(&header, d->frame.head, d->frame.head_len);
    if (more != 0)
        return; /* more bytes needed, or not a header: zstd reports that itself */
    d->frame.head_read = 1;
    d->frame.declared = header.frameType == ZSTD_frame ? header.frameContentSize
                                                       : ZSTD_CONTENTSIZE_UNKNOWN;
}

static int read_zstd(rx_decoder *d, unsigned char *out, size_t cap, size_t *pos)
{
    while (*pos < cap) {
        if (d->in_len == 0 && !d->out_full)
            return RX_DECODE_NEED_INPUT;
        const unsigned char *start = d->in;
        ZSTD_inBuffer in = {d->in, d->in_len, 0};
        ZSTD_outBuffer o = {out + *pos, cap - *pos, 0};
        /* It goes on to the next frame by itself once one is complete. */
        size_t ret = ZSTD_decompressStream(d->codec.zstd, &o, &in);
        consume(d, in.pos);
        *pos += o.pos;
        d->out_full = o.pos == o.size;
        if (ZSTD_isError(ret)) {
            int code = (int)ZSTD_getErrorCode(ret);
            int status = code == ZSTD_error_memory_allocation ? RX_DECODE_NO_MEMORY
                                                              : RX_DECODE_INVALID;
            return fail(d, status, ZSTD_getErrorName(ret), "zstd", code);
        }
        if (!d->frame.head_read && in.pos > 0)
            note_zstd_header(d, start, in.pos);
        d->frame.given += o.pos;
        int sized = d->frame.head_read && d->frame.declared != ZSTD_CONTENTSIZE_UNKNOWN;
        if (sized && (d->frame.given > d->frame.declared ||
                      (ret == 0 && d->frame.given != d->frame.declared)))
            return fail(d, RX_DECODE_INVALID, "frame content size does not match its header",
                        "zstd", 0);
        /* 0: a frame is complete and all of it handed out. A call that took and gave
         * nothing says nothing of where the body is (with no input after a frame, zstd asks
         * for the next frame's header). */
        if (ret == 0) {
            d->phase = PHASE_BETWEEN;
            memset(&d->frame, 0, sizeof d->frame);
        } else if (in.pos > 0 || o.pos > 0) {
            d->phase = PHASE_STREAM;
        }
        if (in.pos == 0 && o.pos == 0 && *pos < cap && d->in_len > 0)
            return fail(d, RX_DECODE_INVALID, "no progress", "zstd", 0);
    }
    return RX_DECODE_MORE;
}
#endif

/* --- reading and finishing ------------------------------------------------------------------ */

int rx_decoder_read(rx_decoder *d, void *out, size_t cap, size_t *written)
{
    size_t pos = 0;
    int status = RX_DECODE_INVALID;
    if (d->phase == PHASE_FAILED) {
        status = d->failure;
    } else if (cap == 0) {
        status = RX_DECODE_MORE;
    } else {
        switch (d->coding) {
        case RX_CODING_GZIP:
        case RX_CODING_DEFLATE:
            status = read_zlib(d, out, cap, &pos);
            break;
        case RX_CODING_BR:
#ifdef RX_DECODE_BROTLI
            status = read_brotli(d, out, cap, &pos);
#endif
            break;
        case RX_CODING_ZSTD:
#ifdef RX_DECODE_ZSTD
            status = read_zstd(d, out, cap, &pos);
#endif
            break;
        }
    }
    *written = pos;
    return status;
}

int rx_decoder_finish(rx_decoder *d)
{
    if (d->phase == PHASE_FAILED)
        return d->failure;
    if (!d->seen)
        return RX_DECODE_NEED_INPUT; /* no body at all (HEAD, 204, 304...) */
    switch (d->phase) {
    case PHASE_BETWEEN:
    case PHASE_ENDED:
        return RX_DECODE_NEED_INPUT;
    default:
        return RX_DECODE_TRUNCATED;
    }
}

size_t rx_decode_size_hint(rx_coding coding, const void *data, size_t len)
{
    const unsigned char *p = data;
    if (coding == RX_CODING_GZIP && len >= 18 && p[0] == 0x1f && p[1] == 0x8b) {
        /* ISIZE, the last four bytes: the last member's size modulo 2^32. */
        const unsigned char *t = p + len - 4;
        return (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
    }
#ifdef RX_DECODE_ZSTD
    if (coding == RX_CODING_ZSTD) {
        unsigned long long size = ZSTD_getFrameContentSize(data, len);
        if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR && size <= SIZE_MAX)
            return (size_t)size;
    }
#endif
    return 0;
}
