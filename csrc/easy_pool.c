/* libcurl easy handles: the pool, and keep-or-reset (see easy_pool.h). */
#include "easy_pool.h"
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#include "stat.h"
#include "transfer_impl.h"

/* Easy handles alive in this process (tests assert that it returns to zero). */
static long live_handles; /* atomic */

long rx_easy_live_count(void) { return __atomic_load_n(&live_handles, __ATOMIC_RELAXED); }

/* The options of the handle itself, set when it is made and after each reset: those that point
 * at the rx_easy (the data of transfer.c's callbacks), then its owner's (`prepare`). 0, or -1
 * when one could not be set. */
static int set_handle_options(rx_easy *x)
{
    CURL *h = x->curl;
    int failed = curl_easy_setopt(h, CURLOPT_PRIVATE, x) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_WRITEDATA, x) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_HEADERDATA, x) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_SOCKOPTDATA, x) != CURLE_OK ||
                 curl_easy_setopt(h, CURLOPT_PREREQDATA, x) != CURLE_OK ||
                 x->pool->prepare(x, x->pool->prepare_arg) != 0;
    return failed ? -1 : 0;
}

static void free_handle(rx_easy *x)
{
    if (x->curl != NULL)
        curl_easy_cleanup(x->curl);
    rx_free(x);
    __atomic_sub_fetch(&live_handles, 1, __ATOMIC_RELAXED);
}

static rx_easy *new_handle(rx_easy_pool *pool)
{
    rx_easy *x = rx_calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    __atomic_add_fetch(&live_handles, 1, __ATOMIC_RELAXED);
    x->pool = pool;
    x->curl = curl_easy_init();
    if (x->curl == NULL || set_handle_options(x) != 0) {
        free_handle(x);
        return NULL;
    }
    return x;
}

/* curl_easy_reset(), then the handle's options again. 0, or -1 when they could not be set. */
static int reset_handle(rx_easy *x)
{
    curl_easy_reset(x->curl);
    return set_handle_options(x);
}

/* A plain GET over HTTP/1.1: no method, body, upload, progress or debug options, nothing
 * origin.c sets for HTTP/2, no fresh connection forced (rx_transfer_reconnect) and no
 * connection closed after it (Connection: close). Not a stream (one may end paused). Its
 * options may stay on its handle when it is done, and it may take such a handle as it is. */
static int keeps_options(const rx_transfer *t)
{
    const rx_request_options *o = &t->options;
    return o->http_version == RX_HTTP_1_1 && !o->has_body && !o->upload_stream && !o->stream &&
           !t->reconnected && !t->closes_connection && strcmp(t->method, "GET") == 0;
}

static void keep(rx_easy_kept *k, const rx_transfer *t)
{
    k->kept = 1;
    k->tls = t->tls;
    k->route = t->route;
    if (k->tls != NULL)
        rx_tls_ref(k->tls);
    if (k->route != NULL)
        rx_route_ref(k->route);
}

/* Let go of what a handle kept (after a reset, or with the handle). */
static void forget(rx_easy_kept *k)
{
    if (k->kept) {
        rx_tls_unref(k->tls);
        rx_route_unref(k->route);
        k->kept = 0;
    }
}

void rx_easy_pool_init(rx_easy_pool *pool, rx_easy_prepare_fn prepare, void *prepare_arg)
{
    memset(pool, 0, sizeof *pool);
    pool->prepare = prepare;
    pool->prepare_arg = prepare_arg;
}

void rx_easy_pool_free(rx_easy_pool *pool)
{
    for (long i = 0; i < pool->idle_count; i++) {
        free_handle(pool->idle[i]);
        forget(&pool->kept[i]);
    }
    pool->idle_count = 0;
}

rx_easy *rx_easy_pool_take(rx_easy_pool *pool, const rx_transfer *t, int *kept)
{
    *kept = 0;
    if (pool->idle_count == 0)
        return new_handle(pool);
    rx_stat_add(&pool->idle_count, -1);
    rx_easy *x = pool->idle[pool->idle_count];
    rx_easy_kept *left = &pool->kept[pool->idle_count];
    if (left->kept && left->tls == t->tls && left->route == t->route && keeps_options(t)) {
        *kept = 1; /* `t` holds the same settings: the handle may point into them still */
    } else if (left->kept && reset_handle(x) != 0) {
        forget(left); /* after the reset: until then the handle may point into them */
        free_handle(x);
        return NULL;
    }
    forget(left);
    return x;
}

void rx_easy_pool_give(rx_easy_pool *pool, rx_easy *x, const rx_transfer *t)
{
    int pooled = pool->idle_count < RX_EASY_POOL_MAX && !rx_transfer_failed(t);
    if (pooled) {
        rx_easy_kept *k = &pool->kept[pool->idle_count];
        k->kept = 0;
        if (keeps_options(t))
            keep(k, t);
        else
            pooled = reset_handle(x) == 0;
    }
    if (pooled) {
        pool->idle[pool->idle_count] = x;
        rx_stat_add(&pool->idle_count, 1);
    } else {
        free_handle(x);
    }
}

void rx_easy_pool_discard(rx_easy_pool *pool, rx_easy *x) { free_handle(x); }

rx_transfer *rx_easy_transfer_of(CURL *h)
{
    rx_easy *x = NULL;
    if (curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&x) != CURLE_OK || x == NULL)
        return NULL;
    return x->transfer;
}
