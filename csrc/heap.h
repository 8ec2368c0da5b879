/* The engine's heap: where every block of the engine's own C code, of libcurl and (in the
 * bundled Linux builds) of the OpenSSL linked into the extension comes from.
 *
 * Connections, TLS sessions and pooled handles live for minutes and are made and dropped as
 * servers close them, while request blocks, header blocks and bodies live for microseconds.
 * Through glibc's malloc the two kinds end up interleaved over a dozen or more arenas (one per
 * calling thread, up to eight per core) and the free space between the long-lived blocks is
 * never given back: under a load with faults RSS crept by 3 MB a minute while the bytes in use
 * stayed level (benchmarks/README.md, "A chaos soak"). So in the bundled Linux builds these
 * functions take from a private jemalloc (scripts/build_libcurl.sh builds it, with its symbols
 * prefixed and hidden, so it never replaces the process's malloc) configured with one arena
 * for every thread, which sorts blocks by size class and returns unused pages within seconds.
 *
 * Everywhere else (macOS, Windows, a system libcurl, and the sanitizer builds, whose checks
 * see only the C library's malloc) they are the C library's malloc, calloc, realloc and free.
 *
 * libcurl is given these at its global initialisation (rx_engine_global_init), and passes them
 * on to its nghttp2 sessions; OpenSSL is given them by rx_heap_take_openssl. The decoders'
 * libraries (zlib, brotli, zstd, for decode.c) keep the C library's malloc.
 * A block from one of these goes back through rx_free, never through free(), and vice versa.
 */
#ifndef RX_HEAP_H
#define RX_HEAP_H

#include <stddef.h>
#include <stdint.h>

void *rx_malloc(size_t size);
void *rx_calloc(size_t count, size_t size);
void *rx_realloc(void *block, size_t size);
void rx_free(void *block);
char *rx_strdup(const char *s);

/* Send the allocations of the OpenSSL linked into the extension to the engine's heap, when
 * that is jemalloc (nothing otherwise). Must come before anything of that OpenSSL allocates:
 * rx_engine_global_init calls it first. */
void rx_heap_take_openssl(void);

/* What the engine's heap is: "jemalloc 5.3.1", or "libc" for the C library's malloc. */
const char *rx_heap_name(void);

/* Give the pages of the engine's heap that hold no block back to the system now (jemalloc
 * keeps freed pages for about ten seconds for reuse, and purges them only while something
 * allocates: an engine gone quiet would keep them). The engine calls it once it has been idle
 * for a second (engine.c, park). Nothing with the C library's malloc. */
void rx_heap_give_back(void);

/* jemalloc's own figures, read now: the bytes handed out and not given back (blocks in the
 * threads' caches count as handed out), and the bytes of its pages resident in memory. Both
 * -1 with the C library's malloc, which keeps no figures for the engine alone. */
void rx_heap_stats(int64_t *allocated, int64_t *resident);

#endif
