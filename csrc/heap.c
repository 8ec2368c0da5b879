#include "heap.h"

#include <stdlib.h>
#include <string.h>

#ifdef RX_HEAP_JEMALLOC

/* jemalloc built with --with-jemalloc-prefix=rxje_ (scripts/build_libcurl.sh): rxje_malloc and
 * friends, distinct from any malloc or jemalloc the process has. Its options (one arena) are
 * compiled in with --with-malloc-conf. */
#include <jemalloc/jemalloc.h>
#include <openssl/crypto.h>

#define RX_STR(x) #x
#define RX_XSTR(x) RX_STR(x)

void *rx_malloc(size_t size) { return rxje_malloc(size); }
void *rx_calloc(size_t count, size_t size) { return rxje_calloc(count, size); }
void *rx_realloc(void *block, size_t size) { return rxje_realloc(block, size); }
void rx_free(void *block) { rxje_free(block); }

/* OpenSSL's allocation hooks carry the caller's file and line, which the heap has no use for. */
static void *openssl_malloc(size_t size, const char *file, int line)
{
    (void)file, (void)line;
    return rxje_malloc(size);
}

static void *openssl_realloc(void *block, size_t size, const char *file, int line)
{
    (void)file, (void)line;
    return rxje_realloc(block, size);
}

static void openssl_free(void *block, const char *file, int line)
{
    (void)file, (void)line;
    rxje_free(block);
}

void rx_heap_take_openssl(void)
{
    /* OpenSSL refuses new hooks once it has allocated anything. Refused (something reached
     * this OpenSSL first), it keeps the C library's malloc for all of its blocks, which is as
     * correct, only not sorted with the rest. This OpenSSL is the extension's own (static,
     * hidden): Python's ssl module and other extensions keep theirs. */
    (void)CRYPTO_set_mem_functions(openssl_malloc, openssl_realloc, openssl_free);
}

const char *rx_heap_name(void)
{
    return "jemalloc " RX_XSTR(JEMALLOC_VERSION_MAJOR) "." RX_XSTR(JEMALLOC_VERSION_MINOR) "." RX_XSTR(
        JEMALLOC_VERSION_BUGFIX);
}

void rx_heap_give_back(void)
{
    /* Every arena's unused dirty pages, purged at once (MALLCTL_ARENAS_ALL). */
    (void)rxje_mallctl("arena." RX_XSTR(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);
}

void rx_heap_stats(int64_t *allocated, int64_t *resident)
{
    /* The figures are a snapshot taken when "epoch" is written. */
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    size_t value;
    *allocated = *resident = -1;
    if (rxje_mallctl("epoch", &epoch, &len, &epoch, len) != 0)
        return;
    len = sizeof value;
    if (rxje_mallctl("stats.allocated", &value, &len, NULL, 0) == 0)
        *allocated = (int64_t)value;
    len = sizeof value;
    if (rxje_mallctl("stats.resident", &value, &len, NULL, 0) == 0)
        *resident = (int64_t)value;
}

#else

void *rx_malloc(size_t size) { return malloc(size); }
void *rx_calloc(size_t count, size_t size) { return calloc(count, size); }
void *rx_realloc(void *block, size_t size) { return realloc(block, size); }
void rx_free(void *block) { free(block); }

void rx_heap_take_openssl(void) {}

const char *rx_heap_name(void) { return "libc"; }

void rx_heap_give_back(void) {}

void rx_heap_stats(int64_t *allocated, int64_t *resident) { *allocated = *resident = -1; }

#endif

char *rx_strdup(const char *s)
{
    size_t size = strlen(s) + 1;
    char *copy = rx_malloc(size);
    if (copy != NULL)
        memcpy(copy, s, size);
    return copy;
}
