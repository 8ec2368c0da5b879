/* HTTP/2 origins: one connection each, requests beyond its stream limit wait (see origin.h). */
#include "origin.h"
#include "heap.h"

#include "admission.h"
#include "buffer.h"

#include <stdlib.h>
#include <string.h>

typedef struct rx_origin rx_origin;

struct rx_origin {
    rx_origin *next;
    rx_origins *all;
    char *key;                /* route key, "\n", then "scheme://authority" of the URL */
    size_t key_len;
    long transfers;           /* entered and not left */
    long sockets;             /* open sockets to it */
    long http2_sockets;       /* ... of which known to speak HTTP/2 */
    long waiting;             /* transfers in the wait list */
    rx_transfer *wait_head, *wait_tail; /* waiting for a stream, linked through wait_next */
};

typedef struct {
    rx_origin *origin;        /* NULL: not one of ours */
    int http2;                /* known to speak HTTP/2 */
    int awaiting;             /* our requests sent on it whose answer has not begun */
} rx_socket_entry;

struct rx_origins {
    rx_origin *list;
    rx_socket_entry *by_fd;   /* indexed by socket descriptor */
    size_t by_fd_len;
    rx_transfer *released_head, *released_tail;
};

/* Where a transfer is queued (rx_transfer.h2.wait_queue). */
enum { NOT_QUEUED = 0, IN_WAIT_LIST = 1, IN_RELEASED = 2 };

rx_origins *rx_origins_new(void) { return rx_calloc(1, sizeof(rx_origins)); }

void rx_origins_free(rx_origins *all)
{
    if (all == NULL)
        return;
    while (all->list != NULL) {
        rx_origin *o = all->list;
        all->list = o->next;
        rx_free(o->key);
        rx_free(o);
    }
    rx_free(all->by_fd);
    rx_free(all);
}

/* The origin part of a URL the Python layer built: scheme "://" authority. */
static size_t origin_length(const char *url)
{
    const char *p = strstr(url, "://");
    if (p == NULL)
        return strlen(url);
    p += 3;
    p += strcspn(p, "/?#");
    return (size_t)(p - url);
}

/* The same origin through another route (a proxy, a Unix socket) is another origin: its
 * connections are not the direct ones. */
static rx_origin *origin_for(rx_origins *all, const char *route_key, const char *url)
{
    size_t route_len = strlen(route_key);
    size_t url_len = origin_length(url);
    size_t len = route_len + 1 + url_len;
    for (rx_origin *o = all->list; o != NULL; o = o->next)
        if (o->key_len == len && memcmp(o->key, route_key, route_len) == 0 &&
            o->key[route_len] == '\n' && memcmp(o->key + route_len + 1, url, url_len) == 0)
            return o;
    rx_origin *o = rx_calloc(1, sizeof *o);
    if (o == NULL || (o->key = rx_malloc(len + 1)) == NULL) {
        rx_free(o);
        return NULL;
    }
    memcpy(o->key, route_key, route_len);
    o->key[route_len] = '\n';
    memcpy(o->key + route_len + 1, url, url_len);
    o->key[len] = '\0';
    o->key_len = len;
    o->all = all;
    o->next = all->list;
    all->list = o;
    return o;
}

/* An origin with no transfer and no socket left is dropped (a crawler meets many). */
static void drop_if_unused(rx_origin *o)
{
    if (o->transfers > 0 || o->sockets > 0)
        return;
    for (rx_origin **link = &o->all->list; *link != NULL; link = &(*link)->next) {
        if (*link == o) {
            *link = o->next;
            rx_free(o->key);
            rx_free(o);
            return;
        }
    }
}

static void append(rx_transfer **head, rx_transfer **tail, rx_transfer *t)
{
    t->h2.wait_next = NULL;
    if (*tail != NULL)
        (*tail)->h2.wait_next = t;
    else
        *head = t;
    *tail = t;
}

static void unlink_from(rx_transfer **head, rx_transfer **tail, rx_transfer *t)
{
    rx_transfer *prev = NULL;
    for (rx_transfer *it = *head; it != NULL; prev = it, it = it->h2.wait_next) {
        if (it != t)
            continue;
        if (prev != NULL)
            prev->h2.wait_next = t->h2.wait_next;
        else
            *head = t->h2.wait_next;
        if (*tail == t)
            *tail = prev;
        t->h2.wait_next = NULL;
        return;
    }
}

static rx_socket_entry *entry_for(rx_origins *all, curl_socket_t fd, int grow);

/* The transfer's request no longer awaits its answer on the socket it went out on (the answer
 * began, the request goes out again, or the transfer is forgotten or waits for a stream). */
static void no_longer_awaiting(rx_transfer *t)
{
    rx_origin *o = t->h2.origin;
    curl_socket_t fd = t->h2.request_fd;
    t->h2.request_fd = CURL_SOCKET_BAD;
    if (o == NULL || fd == CURL_SOCKET_BAD)
        return;
    rx_socket_entry *entry = entry_for(o->all, fd, 0);
    if (entry != NULL && entry->origin == o && entry->awaiting > 0)
        entry->awaiting--;
}

static void wait_for_stream(rx_origin *o, rx_transfer *t)
{
    t->h2.wait_queue = IN_WAIT_LIST;
    o->waiting++;
    append(&o->wait_head, &o->wait_tail, t);
}

/* Let up to `count` waiting transfers of `o` go (count < 0: all). With `connect`, they may open
 * a connection should libcurl find no free stream for them (their connection is gone);
 * without, they take a stream that just became free, or wait again. */
static void release(rx_origin *o, long count, int connect)
{
    while (o->wait_head != NULL && count-- != 0) {
        rx_transfer *t = o->wait_head;
        o->wait_head = t->h2.wait_next;
        if (o->wait_head == NULL)
            o->wait_tail = NULL;
        o->waiting--;
        t->h2.may_connect = connect;
        t->h2.wait_queue = IN_RELEASED; /* until it enters again */
        append(&o->all->released_head, &o->all->released_tail, t);
    }
}

int rx_origin_enter(rx_origins *all, rx_transfer *t)
{
    rx_origin *o = t->h2.origin;
    if (o == NULL) {
        if ((o = origin_for(all, rx_transfer_route_key(t), rx_transfer_url(t))) == NULL)
            return RX_ADMIT_NOMEM;
        o->transfers++;
        t->h2.origin = o;
    }
    int released = t->h2.wait_queue == IN_RELEASED;
    t->h2.wait_queue = NOT_QUEUED;
    if (!released && o->wait_head != NULL && o->http2_sockets > 0) {
        wait_for_stream(o, t); /* behind those already waiting */
        return RX_ADMIT_WAIT;
    }
    /* PIPEWAIT makes libcurl hold a transfer back while a connection to the origin is being
     * set up, to multiplex on it. Once an HTTP/2 connection is known, a transfer that finds it
     * full must come here instead: libcurl would hold it back on the new connection we refuse
     * to open, in a queue it drains one transfer per event, and it could wait there for good. */
    curl_easy_setopt(rx_transfer_easy(t), CURLOPT_PIPEWAIT, o->http2_sockets == 0 ? 1L : 0L);
    return RX_ADMIT_NOW;
}

int rx_origin_wait_again(rx_transfer *t)
{
    if (!t->h2.refused_socket)
        return 0;
    t->h2.refused_socket = 0;
    no_longer_awaiting(t);
    rx_origin *o = t->h2.origin;
    wait_for_stream(o, t);
    if (o->http2_sockets == 0)
        release(o, -1, 1); /* its connection closed meanwhile: nothing to wait for */
    else if (o->transfers == o->waiting)
        release(o, 1, 1); /* no request of ours is under way there: none will end to free a
                           * stream, so the connection is not usable to libcurl; open one */
    return 1;
}

static void mark_http2(rx_origin *o, rx_socket_entry *entry)
{
    if (!entry->http2) {
        entry->http2 = 1;
        o->http2_sockets++;
    }
}

void rx_origin_request_started(rx_transfer *t, curl_socket_t fd)
{
    rx_origin *o = t->h2.origin;
    if (o == NULL)
        return;
    no_longer_awaiting(t);
    rx_socket_entry *entry = entry_for(o->all, fd, 0);
    if (entry == NULL || entry->origin != o)
        return;
    /* A request goes out on a socket where another still waits for its answer: the socket
     * multiplexes, so it speaks HTTP/2. (HTTP/1.1 hands a connection on only after the whole
     * answer came; libcurl never pipelines.) With prior knowledge it does from the start. */
    if (entry->awaiting > 0 || rx_transfer_http_mode(t) == RX_HTTP_2_PRIOR_KNOWLEDGE)
        mark_http2(o, entry);
    entry->awaiting++;
    t->h2.request_fd = fd;
}

void rx_origin_leave(rx_origins *all, rx_transfer *t)
{
    rx_origin *o = t->h2.origin;
    if (o == NULL)
        return;
    no_longer_awaiting(t);
    if (t->h2.wait_queue == IN_WAIT_LIST) {
        unlink_from(&o->wait_head, &o->wait_tail, t);
        o->waiting--;
    } else if (t->h2.wait_queue == IN_RELEASED)
        unlink_from(&all->released_head, &all->released_tail, t);
    t->h2.wait_queue = NOT_QUEUED;
    t->h2.origin = NULL;
    o->transfers--;
    release(o, 1, o->transfers == o->waiting); /* its stream is free now */
    drop_if_unused(o);
}

rx_transfer *rx_origin_next(rx_origins *all, int *admitted)
{
    rx_transfer *t;
    while ((t = all->released_head) != NULL) {
        all->released_head = t->h2.wait_next;
        if (all->released_head == NULL)
            all->released_tail = NULL;
        t->h2.wait_next = NULL;
        *admitted = rx_origin_enter(all, t); /* sees IN_RELEASED: not behind the others */
        if (*admitted != RX_ADMIT_WAIT)
            return t;
    }
    return NULL;
}

static rx_socket_entry *entry_for(rx_origins *all, curl_socket_t fd, int grow)
{
    if (fd == CURL_SOCKET_BAD)
        return NULL;
    if ((size_t)fd >= all->by_fd_len) {
        if (!grow)
            return NULL;
        rx_socket_entry *grown =
            rx_table_grow(all->by_fd, &all->by_fd_len, sizeof *all->by_fd, (size_t)fd);
        if (grown == NULL)
            return NULL;
        all->by_fd = grown;
    }
    return &all->by_fd[fd];
}

void rx_origin_answer_started(rx_transfer *t, int http2)
{
    rx_origin *o = t->h2.origin;
    rx_socket_entry *entry = o != NULL ? entry_for(o->all, t->h2.request_fd, 0) : NULL;
    if (http2 && entry != NULL && entry->origin == o)
        mark_http2(o, entry);
    no_longer_awaiting(t);
}

int rx_origin_may_open_socket(rx_transfer *t)
{
    rx_origin *o = t->h2.origin;
    if (o != NULL && !t->h2.may_connect && o->http2_sockets > 0) {
        /* A connection to this origin speaks HTTP/2 and libcurl found no free stream on it:
         * wait for one instead (rx_origin_wait_again). Nothing has been sent yet. */
        t->h2.refused_socket = 1;
        return 0;
    }
    return 1;
}

int rx_origin_socket_opened(rx_transfer *t, curl_socket_t fd)
{
    rx_origin *o = t->h2.origin;
    if (o == NULL)
        return 0;
    rx_socket_entry *entry = entry_for(o->all, fd, 1);
    if (entry == NULL)
        return -1;
    entry->origin = o;
    entry->http2 = 0;
    entry->awaiting = 0;
    o->sockets++;
    return 0;
}

void rx_origin_socket_closing(rx_origins *all, curl_socket_t fd)
{
    rx_socket_entry *entry = entry_for(all, fd, 0);
    if (entry != NULL && entry->origin != NULL) {
        rx_origin *o = entry->origin;
        o->sockets--;
        if (entry->http2 && --o->http2_sockets == 0)
            release(o, -1, 1); /* the connection they waited for is gone: open a new one */
        entry->origin = NULL;
        entry->http2 = 0;
        entry->awaiting = 0;
        drop_if_unused(o);
    }
}

