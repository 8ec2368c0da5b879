/* Content decoders: a response body's Content-Encoding undone with the zlib, brotli and zstd
 * that the extension already links for libcurl (the engine itself never decodes: it hands
 * bodies over as sent, CURLOPT_HTTP_CONTENT_DECODING off).
 *
 * One decoder per coding of one body. The caller feeds input, then reads decoded output into
 * a buffer of its own, of whatever size it chooses: a read never writes more than that, so a
 * decompression bomb (1 MB that decodes to 1 GiB) is decoded only as far as the caller reads.
 * At the end of the body, finish() says whether the compressed stream was complete.
 *
 *     rx_decoder *d = rx_decoder_new(RX_CODING_GZIP);
 *     for each piece of the body:
 *         rx_decoder_feed(d, piece, n);
 *         do status = rx_decoder_read(d, out, sizeof out, &written), use out[0..written);
 *         while (status == RX_DECODE_MORE);          (a negative status is an error)
 *     status = rx_decoder_finish(d);                 (RX_DECODE_TRUNCATED: the body stopped early)
 *     rx_decoder_free(d);
 *
 * What each coding accepts, as requestx decoded them before this file (in Python):
 *   gzip     RFC 1952; several members one after the other are decoded and joined; zero bytes
 *            after a member are padding; anything else after a member that does not start a
 *            new one (1f 8b) is ignored, as is everything after it.
 *   deflate  RFC 9110's "deflate" is the zlib format (RFC 1950), but some servers send raw
 *            deflate (RFC 1951): the first two bytes decide (a valid zlib header, else raw).
 *            Bytes after the end of the stream are ignored.
 *   br       RFC 7932; bytes after the end of the stream are an error (as brotli reports them).
 *   zstd     RFC 8878; several frames one after the other are decoded and joined; bytes after a
 *            frame that are not a frame are an error. A frame whose window is over zstd's
 *            default limit (128 MiB) is refused, as a memory bound.
 * An empty body (nothing fed but empty pieces) is no error in any coding.
 *
 * br and zstd are compiled in only when the build defines RX_DECODE_BROTLI and RX_DECODE_ZSTD
 * (setup.py, when the libcurl build links those libraries); rx_decoder_supports() says which.
 *
 * Not thread-safe: one decoder is used by one thread at a time. Nothing here touches Python,
 * so the caller may run it without the GIL. */
#ifndef RX_DECODE_H
#define RX_DECODE_H

#include <stddef.h>

typedef enum rx_coding {
    RX_CODING_GZIP = 1,
    RX_CODING_DEFLATE = 2,
    RX_CODING_BR = 3,
    RX_CODING_ZSTD = 4,
} rx_coding;

/* What rx_decoder_read() and rx_decoder_finish() return. */
enum {
    RX_DECODE_MORE = 0,       /* read: the buffer was filled; more output may be waiting */
    RX_DECODE_NEED_INPUT = 1, /* read: all that was fed is decoded and handed out; finish: the
                                 stream was complete (or the body empty) */
    RX_DECODE_INVALID = -1,   /* the data cannot be decoded (rx_decoder_message says why);
                                 every later read and finish returns it again */
    RX_DECODE_TRUNCATED = -2, /* finish: the body ended before the end of the compressed stream */
    RX_DECODE_NO_MEMORY = -3, /* the codec could not allocate its state */
};

typedef struct rx_decoder rx_decoder;

/* Whether this build can decode `coding` (gzip and deflate always). */
int rx_decoder_supports(rx_coding coding);

/* A decoder for one body in `coding`, or NULL when the coding is not compiled in or memory is
 * short. */
rx_decoder *rx_decoder_new(rx_coding coding);

void rx_decoder_free(rx_decoder *d);

/* The next piece of the body. The decoder borrows `data` (nothing is copied) until a read
 * returns RX_DECODE_NEED_INPUT: the caller keeps it alive and unchanged until then, and feeds
 * the next piece only after that. Returns 0, or RX_DECODE_INVALID when the last piece is not
 * used up yet (the new one is then not taken). */
int rx_decoder_feed(rx_decoder *d, const void *data, size_t len);

/* Bytes of the fed piece not decoded yet. */
size_t rx_decoder_input_left(const rx_decoder *d);

/* Decode into out[0..cap) (cap > 0), as much as the input allows: *written is set to the number
 * of bytes written, which may be 0. Returns RX_DECODE_MORE when out is full (call again, with
 * room, before feeding more), RX_DECODE_NEED_INPUT when the input is used up and every decoded
 * byte handed out, or a negative RX_DECODE_* error. */
int rx_decoder_read(rx_decoder *d, void *out, size_t cap, size_t *written);

/* The body has ended: RX_DECODE_NEED_INPUT when the compressed stream was complete (or the
 * body empty), RX_DECODE_TRUNCATED when it stopped before its end, or the error a read
 * returned. Input fed and not read yet counts as not there. */
int rx_decoder_finish(rx_decoder *d);

/* Why the last RX_DECODE_INVALID or RX_DECODE_NO_MEMORY ("" if none): the codec's own words
 * and its error code, e.g. "incorrect header check (zlib error -3)". Valid until the decoder
 * is freed. */
const char *rx_decoder_message(const rx_decoder *d);

/* For a whole body in `coding`: the decoded size it announces (gzip's ISIZE of its last
 * member, zstd's frame content size of its first frame), or 0 when it announces none. A hint
 * for sizing a buffer, from untrusted bytes: it may be wrong, and a bomb announces its full
 * size. */
size_t rx_decode_size_hint(rx_coding coding, const void *data, size_t len);

/* Decoders alive in this process (tests assert it returns to zero). */
long rx_decoder_live_count(void);

#endif
