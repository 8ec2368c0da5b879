/* libcurl easy handles: the engine's pool of idle ones, and what each still has set.
 *
 * A transfer starts on a handle taken from the pool (rx_easy_pool_take) and gives it back when
 * it is done (rx_easy_pool_give): kept as it is, reset, or freed. After a plain GET over
 * HTTP/1.1 (no body, not fed or streamed, no fresh connection forced) its options stay, and
 * the next such GET with the same TLS settings and route (compared by identity) sets only its
 * own (URL, headers, error buffer, connect timeout); anything else resets the handle first. A
 * failed transfer's handle is freed: a failure may leave state behind that curl_easy_reset()
 * keeps (libcurl 7.88 kept a pending body rewind, which failed the handle's next request), and
 * failures are rare enough that a fresh handle costs nothing that shows. libcurl supports
 * reusing a handle without a reset (its easy interface is one handle, transfer after
 * transfer); the reset and the options it makes us set again cost a request about a
 * microsecond.
 *
 * The handle's callbacks are given its rx_easy, not the transfer: their data options (and
 * CURLOPT_PRIVATE) are set once per handle, when it is made and after each reset, as are its
 * owner's options (`prepare`: the engine's socket callbacks and connection limits), and a
 * transfer that starts on it only fills in `transfer`. Ten options fewer per request (1,600
 * instructions of the load generator's 50,400, benchmarks/instructions.py).
 *
 * Loop thread only (whoever drives the engine), but for rx_easy_live_count().
 */
#ifndef RX_EASY_POOL_H
#define RX_EASY_POOL_H

#include <curl/curl.h>

#include "route.h"
#include "tls.h"
#include "transfer.h"

typedef struct rx_easy rx_easy;
/* The owner's options of a new or reset handle: 0, or nonzero: failed. */
typedef int (*rx_easy_prepare_fn)(rx_easy *x, void *arg);

/* An easy handle, and the transfer it runs now. */
struct rx_easy {
    CURL *curl;
    rx_transfer *transfer; /* NULL between transfers */
    struct rx_easy_pool *pool;
};

/* What an idle handle still has set from its last transfer: a plain GET's options, made for
 * these TLS settings and this route (references, held while the handle waits: it may point
 * into them). */
typedef struct {
    int kept; /* 0: the handle was reset (or is new); the rest is unused */
    rx_tls *tls;
    rx_route *route;
} rx_easy_kept;

enum { RX_EASY_POOL_MAX = 128 };

typedef struct rx_easy_pool {
    rx_easy_prepare_fn prepare;
    void *prepare_arg;
    rx_easy *idle[RX_EASY_POOL_MAX];
    rx_easy_kept kept[RX_EASY_POOL_MAX]; /* what each idle handle still has set */
    long idle_count; /* also a statistic: stat.h */
} rx_easy_pool;

/* `prepare` sets the owner's options of every handle the pool makes or resets. */
void rx_easy_pool_init(rx_easy_pool *pool, rx_easy_prepare_fn prepare, void *prepare_arg);
/* Free the idle handles. */
void rx_easy_pool_free(rx_easy_pool *pool);

/* A handle for `t` to start on: an idle one, or a new one. *kept is set when the idle handle's
 * options fit `t` (set only its own); otherwise the handle is new or has been reset. NULL
 * when out of memory. */
rx_easy *rx_easy_pool_take(rx_easy_pool *pool, const rx_transfer *t, int *kept);
/* The handle `t` ran on, done with (off libcurl, `t` finished): kept, reset or freed. */
void rx_easy_pool_give(rx_easy_pool *pool, rx_easy *x, const rx_transfer *t);
/* A handle no transfer could start on: freed. */
void rx_easy_pool_discard(rx_easy_pool *pool, rx_easy *x);

/* The transfer a callback's data (an rx_easy, CURLOPT_*DATA) belongs to now. */
static inline rx_transfer *rx_easy_data_transfer(void *data)
{
    return ((rx_easy *)data)->transfer;
}

/* The transfer an easy handle of ours runs now; NULL for a handle that is not ours (libcurl's
 * own admin handle). */
rx_transfer *rx_easy_transfer_of(CURL *h);

/* libcurl easy handles alive in this process, idle ones included (a debug aid: tests assert
 * it returns to zero once every engine is freed). Any thread. */
long rx_easy_live_count(void);

#endif
